package push

import (
	"context"
	"sync"
	"time"
)

// RateLimiter admits requests per API key.
type RateLimiter interface {
	// Allow counts one request for key against limit requests per period
	// and reports whether it is admitted.
	Allow(ctx context.Context, key string, limit int, period time.Duration) (RateDecision, error)
}

// RateDecision is a rate limiter's answer.
type RateDecision struct {
	Allowed    bool
	Limit      int
	Remaining  int           // requests still admitted right now
	RetryAfter time.Duration // when refused: how long until one more is admitted
	ResetAfter time.Duration // how long until the full limit is available again
}

// LocalRateLimiter is an in-process GCRA limiter (the generic cell rate
// algorithm): limit requests per period, with a burst of the whole limit.
type LocalRateLimiter struct {
	clock Clock
	mu    sync.Mutex
	tat   map[string]time.Time // theoretical arrival time per key
	calls int
}

// NewLocalRateLimiter returns a limiter that reads time from clock (the
// system clock when nil).
func NewLocalRateLimiter(clock Clock) *LocalRateLimiter {
	if clock == nil {
		clock = SystemClock{}
	}
	return &LocalRateLimiter{clock: clock, tat: make(map[string]time.Time)}
}

// Allow implements RateLimiter.
func (l *LocalRateLimiter) Allow(_ context.Context, key string, limit int, period time.Duration) (RateDecision, error) {
	if limit <= 0 {
		return RateDecision{Allowed: true, Limit: limit}, nil
	}
	now := l.clock.Now()
	interval := period / time.Duration(limit)
	burst := period // the whole limit may arrive at once

	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls%4096 == 0 {
		l.forget(now)
	}
	tat := l.tat[key]
	if tat.Before(now) {
		tat = now
	}
	newTAT := tat.Add(interval)
	allowAt := newTAT.Add(-burst)
	if now.Before(allowAt) {
		return RateDecision{
			Allowed:    false,
			Limit:      limit,
			Remaining:  0,
			RetryAfter: allowAt.Sub(now),
			ResetAfter: tat.Sub(now),
		}, nil
	}
	l.tat[key] = newTAT
	remaining := int(burst-newTAT.Sub(now)) / int(interval)
	return RateDecision{
		Allowed:    true,
		Limit:      limit,
		Remaining:  remaining,
		ResetAfter: newTAT.Sub(now),
	}, nil
}

// forget drops keys whose bucket is full again, to bound memory.
func (l *LocalRateLimiter) forget(now time.Time) {
	for k, tat := range l.tat {
		if !tat.After(now) {
			delete(l.tat, k)
		}
	}
}
