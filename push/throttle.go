package push

import (
	"sync"
	"time"
)

// The sign-in throttle: after freeFailures failed attempts for one email
// (freeAddressFailures from one address, which many people may share),
// each further attempt waits, twice as long after every failure, up to
// maxThrottle; a success clears the email's count. Counts are forgotten
// after forgetFailures of quiet.
const (
	freeFailures        = 3
	freeAddressFailures = 20
	firstWait           = time.Second
	maxThrottle         = 15 * time.Minute
	forgetFailures      = time.Hour
	maxThrottled        = 100000 // keys remembered at most; the oldest are dropped
)

// throttle counts failed sign-ins per key (an address, an email). It
// lives in one process: on several nodes each throttles on its own.
type throttle struct {
	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	n     int
	last  time.Time
	until time.Time // no attempt before
}

func (t *throttle) init() { t.keys = make(map[string]*failures) }

// wait returns how long an attempt for keys must still wait (0: none).
func (t *throttle) wait(keys []string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var w time.Duration
	for _, k := range keys {
		if f, ok := t.keys[k]; ok && now.Before(f.until) {
			w = max(w, f.until.Sub(now))
		}
	}
	return w
}

// fail counts a failed attempt for keys.
func (t *throttle) fail(keys []string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.keys) >= maxThrottled {
		for k, f := range t.keys {
			if now.Sub(f.last) > forgetFailures || len(t.keys) >= maxThrottled {
				delete(t.keys, k)
			}
		}
	}
	for _, k := range keys {
		f, ok := t.keys[k]
		if !ok || now.Sub(f.last) > forgetFailures {
			f = &failures{}
			t.keys[k] = f
		}
		f.n++
		f.last = now
		free := freeFailures
		if k[0] == 'a' {
			free = freeAddressFailures
		}
		if f.n > free {
			w := firstWait << min(f.n-free-1, 20)
			f.until = now.Add(min(w, maxThrottle))
		}
	}
}

// clear forgets the failures of keys.
func (t *throttle) clear(keys []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		delete(t.keys, k)
	}
}
