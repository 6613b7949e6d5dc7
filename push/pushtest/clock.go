package pushtest

import (
	"sync"
	"time"
)

// Clock is a push.Clock that runs with real time but can be moved
// forward, for testing deadlines such as the queue-wait limit.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now returns the real time plus every Advance so far.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
