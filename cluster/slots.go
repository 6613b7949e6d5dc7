package cluster

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/redis/go-redis/v9"
)

// SendSlots is a push.SendSlots kept in Redis: the cap on a bot's jobs
// being sent at once holds across every node. Each bot has a sorted set
// of the jobs holding its slots, scored by when each holder's lease ends,
// so that the slot of a node that died frees itself.
//
// While Redis cannot be reached, each node counts on its own (a
// push.LocalSendSlots), so sends go on; the cap is then per node until
// Redis is back (asked again each second).
type SendSlots struct {
	rdb       redis.UniversalClient
	namespace string
	fallback  push.LocalSendSlots
	timeout   time.Duration
	log       *slog.Logger
	acquire   *redis.Script
	degraded  atomic.Bool
	skipUntil atomic.Int64 // Unix ns: after a failure, Redis is not asked again before then
}

var _ push.SendSlots = (*SendSlots)(nil)

// SendSlotsOptions configure SendSlots.
type SendSlotsOptions struct {
	// Namespace keeps Herald installations that share one Redis apart
	// (default "herald").
	Namespace string
	// Timeout bounds one Redis call before the fallback answers
	// (default 500 ms).
	Timeout time.Duration
	// Logger receives Redis trouble.
	Logger *slog.Logger
}

// NewSendSlots returns the slots on rdb, which the caller owns.
func NewSendSlots(rdb redis.UniversalClient, opts SendSlotsOptions) *SendSlots {
	if opts.Namespace == "" {
		opts.Namespace = "herald"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 500 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &SendSlots{rdb: rdb, namespace: opts.Namespace, timeout: opts.Timeout, log: opts.Logger,
		acquire: redis.NewScript(acquireSource)}
}

// acquireSource is the script that takes a slot: KEYS[1] is the bot's
// set; ARGV are the job, the cap, the time in ms and the lease in ms.
// Holders whose lease ended are dropped first; a job holding a slot
// renews it.
const acquireSource = `
local now = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`

func (s *SendSlots) key(botID int64) string {
	return s.namespace + ":slots:" + strconv.FormatInt(botID, 10)
}

// Acquire implements push.SendSlots.
func (s *SendSlots) Acquire(ctx context.Context, botID int64, jobID string, limit int, lease time.Duration) bool {
	if time.Now().UnixNano() < s.skipUntil.Load() {
		return s.fallback.Acquire(ctx, botID, jobID, limit, lease)
	}
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := s.acquire.Run(rctx, s.rdb, []string{s.key(botID)}, jobID, limit, time.Now().UnixMilli(), max(lease.Milliseconds(), 1)).Int()
	if err != nil {
		s.fail(err)
		return s.fallback.Acquire(ctx, botID, jobID, limit, lease)
	}
	if s.degraded.Swap(false) {
		s.log.Info("send slots: Redis is back; the cap on a bot's jobs being sent holds across nodes again")
	}
	return n == 1
}

// Release implements push.SendSlots.
func (s *SendSlots) Release(ctx context.Context, botID int64, jobID string) {
	s.fallback.Release(ctx, botID, jobID)
	if time.Now().UnixNano() < s.skipUntil.Load() {
		return // the slot's lease ends it
	}
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.rdb.ZRem(rctx, s.key(botID), jobID).Err(); err != nil {
		s.fail(err)
	}
}

// fail notes that Redis did not answer: the node counts on its own for a
// second.
func (s *SendSlots) fail(err error) {
	s.skipUntil.Store(time.Now().Add(retryRedis).UnixNano())
	if !s.degraded.Swap(true) {
		s.log.Warn("send slots: Redis cannot be reached; each node caps a bot's jobs being sent on its own until it is back", "err", err)
	}
}
