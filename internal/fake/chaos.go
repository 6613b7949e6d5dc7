package fake

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Chaos sets how often a fake platform misbehaves, as probabilities per
// request.
type Chaos struct {
	Seed      uint64
	Slow      float64       // answer after a random delay up to MaxDelay
	MaxDelay  time.Duration //
	Fail5xx   float64       // answer 502: the message may or may not have gone
	Fail4xx   float64       // a definitive refusal
	RateLimit float64       // 429 with retry_after 0: nothing was sent
	Drop      float64       // read the request, then close the connection
}

type chaos struct {
	mu  sync.Mutex
	cfg Chaos
	rnd *rand.Rand
}

// pick decides what to do with one request.
func (c *chaos) pick() (drop bool, fault *TelegramFault, delay time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rnd.Float64() < c.cfg.Slow && c.cfg.MaxDelay > 0 {
		delay = time.Duration(c.rnd.Int64N(int64(c.cfg.MaxDelay)))
	}
	x := c.rnd.Float64()
	switch {
	case x < c.cfg.Drop:
		return true, nil, delay
	case x < c.cfg.Drop+c.cfg.Fail5xx:
		return false, &TelegramFault{Status: http.StatusBadGateway, Description: "Bad Gateway"}, delay
	case x < c.cfg.Drop+c.cfg.Fail5xx+c.cfg.Fail4xx:
		return false, &TelegramFault{Status: http.StatusBadRequest, Description: "Bad Request: chat not found"}, delay
	case x < c.cfg.Drop+c.cfg.Fail5xx+c.cfg.Fail4xx+c.cfg.RateLimit:
		return false, &TelegramFault{Status: http.StatusTooManyRequests, Description: "Too Many Requests: retry after 0", RetryAfter: 0}, delay
	}
	return false, nil, delay
}

// SetChaos makes the fake misbehave at random, reproducibly for one seed.
func (f *Telegram) SetChaos(c Chaos) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chaos = &chaos{cfg: c, rnd: rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))}
}
