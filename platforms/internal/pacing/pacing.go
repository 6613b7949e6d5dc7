// Package pacing spaces out a bot's sends to keep within a platform's
// published limits (per bot, per chat), so that a burst waits in Herald's
// queue instead of failing with the platform's "too many requests".
package pacing

import (
	"sync"
	"time"
)

// Rate is at most Burst sends at once, then one every Every.
type Rate struct {
	Every time.Duration
	Burst int
}

// PerSecond returns a rate of n sends a second with a burst of n.
func PerSecond(n int) Rate { return Rate{Every: time.Second / time.Duration(n), Burst: n} }

// PerMinute returns a rate of n sends a minute with a burst of n.
func PerMinute(n int) Rate { return Rate{Every: time.Minute / time.Duration(n), Burst: n} }

// Limit is a rate applied to one key, e.g. a bot or a bot's chat.
type Limit struct {
	Key  string
	Rate Rate
}

// Pacer tracks send slots per key (a GCRA per key).
type Pacer struct {
	now func() time.Time

	mu    sync.Mutex
	tat   map[string]time.Time // theoretical arrival time per key
	calls int
}

// New returns a Pacer reading time from now (time.Now when nil).
func New(now func() time.Time) *Pacer {
	if now == nil {
		now = time.Now
	}
	return &Pacer{now: now, tat: make(map[string]time.Time)}
}

// Reserve claims one send slot under every limit at once and returns 0, or
// claims nothing and returns how long to wait until all would allow one.
// A nil Pacer paces nothing.
func (p *Pacer) Reserve(limits ...Limit) time.Duration {
	if p == nil {
		return 0
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.calls%4096 == 0 {
		for k, t := range p.tat {
			if t.Before(now) {
				delete(p.tat, k)
			}
		}
	}
	var wait time.Duration
	next := make([]time.Time, len(limits))
	for i, l := range limits {
		if l.Rate.Every <= 0 {
			continue
		}
		burst := l.Rate.Burst
		if burst < 1 {
			burst = 1
		}
		tat := p.tat[l.Key]
		if tat.Before(now) {
			tat = now
		}
		newTAT := tat.Add(l.Rate.Every)
		allowAt := newTAT.Add(-time.Duration(burst) * l.Rate.Every)
		if d := allowAt.Sub(now); d > wait {
			wait = d
		}
		next[i] = newTAT
	}
	if wait > 0 {
		return wait
	}
	for i, l := range limits {
		if l.Rate.Every > 0 {
			p.tat[l.Key] = next[i]
		}
	}
	return 0
}

// Release gives back the slot a Reserve of the same limits claimed, for a
// send that will not be made: each key's next slot comes one interval
// sooner, never sooner than now.
func (p *Pacer) Release(limits ...Limit) {
	if p == nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range limits {
		tat, ok := p.tat[l.Key]
		if l.Rate.Every <= 0 || !ok {
			continue
		}
		if tat = tat.Add(-l.Rate.Every); tat.After(now) {
			p.tat[l.Key] = tat
		} else {
			delete(p.tat, l.Key)
		}
	}
}
