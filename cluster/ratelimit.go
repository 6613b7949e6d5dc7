package cluster

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/heraldpush/herald/push"
	"github.com/redis/go-redis/v9"
)

// RateLimiter is a push.RateLimiter kept in Redis with redis_rate (GCRA,
// the same algorithm as push.LocalRateLimiter): every node counts against
// one budget per key, on Redis's clock.
//
// While Redis cannot be reached, each node falls back to its own
// in-process limiter, so the API keeps answering; the limit is then per
// node until Redis is back (asked again each second).
type RateLimiter struct {
	limiter   *redis_rate.Limiter
	namespace string
	fallback  *push.LocalRateLimiter
	timeout   time.Duration
	log       *slog.Logger
	degraded  atomic.Bool
	skipUntil atomic.Int64 // Unix ns: after a failure, Redis is not asked again before then
}

// retryRedis is how long a node limits on its own after Redis failed to
// answer, before it asks Redis again (so that an outage does not add the
// timeout to every request).
const retryRedis = time.Second

var _ push.RateLimiter = (*RateLimiter)(nil)

// RateLimiterOptions configure a RateLimiter.
type RateLimiterOptions struct {
	// Namespace keeps Herald installations that share one Redis apart
	// (default "herald").
	Namespace string
	// Timeout bounds one Redis call before the fallback answers
	// (default 500 ms).
	Timeout time.Duration
	// Clock is the fallback limiter's clock (default the system clock).
	Clock push.Clock
	// Logger receives Redis trouble.
	Logger *slog.Logger
}

// NewRateLimiter returns a limiter on rdb, which the caller owns.
func NewRateLimiter(rdb redis.UniversalClient, opts RateLimiterOptions) *RateLimiter {
	if opts.Namespace == "" {
		opts.Namespace = "herald"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &RateLimiter{
		limiter:   redis_rate.NewLimiter(rdb),
		namespace: opts.Namespace,
		fallback:  push.NewLocalRateLimiter(opts.Clock),
		timeout:   opts.Timeout,
		log:       opts.Logger,
	}
}

// Allow implements push.RateLimiter.
func (l *RateLimiter) Allow(ctx context.Context, key string, limit int, period time.Duration) (push.RateDecision, error) {
	if limit <= 0 {
		return push.RateDecision{Allowed: true, Limit: limit}, nil
	}
	if time.Now().UnixNano() < l.skipUntil.Load() {
		return l.fallback.Allow(ctx, key, limit, period)
	}
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := l.limiter.Allow(rctx, l.namespace+":"+key, redis_rate.Limit{Rate: limit, Burst: limit, Period: period})
	if err != nil {
		if ctx.Err() != nil {
			return push.RateDecision{}, ctx.Err()
		}
		l.skipUntil.Store(time.Now().Add(retryRedis).UnixNano())
		if !l.degraded.Swap(true) {
			l.log.Warn("rate limit: Redis cannot be reached; each node limits on its own until it is back", "err", err)
		}
		return l.fallback.Allow(ctx, key, limit, period)
	}
	if l.degraded.Swap(false) {
		l.log.Info("rate limit: Redis is back; the limit is shared again")
	}
	return push.RateDecision{
		Allowed:    res.Allowed > 0,
		Limit:      limit,
		Remaining:  max(res.Remaining, 0),
		RetryAfter: max(res.RetryAfter, 0),
		ResetAfter: max(res.ResetAfter, 0),
	}, nil
}
