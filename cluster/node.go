package cluster

import (
	"context"
	"log/slog"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/redis/go-redis/v9"
)

// Node is what one Herald process shares with the others through Redis:
// the asynq queue, the completion notices, the rate limit and the cap on a
// bot's jobs being sent at once.
type Node struct {
	Queue       *queue.Redis
	Notifier    *Notifier
	RateLimiter *RateLimiter
	// Slots caps a bot's jobs being sent at once across the nodes.
	Slots *SendSlots
}

// NodeOptions configure NewNode.
type NodeOptions struct {
	// Namespace keeps Herald installations that share one Redis apart
	// (default "herald"); it names the queue, the notices' channel and
	// the rate limit's keys.
	Namespace string
	// Logger receives Redis trouble.
	Logger *slog.Logger
	// Clock is the clock of the rate limit's fallback (default the system
	// clock).
	Clock push.Clock
	// Queue tunes the queue; its Namespace and Logger are the fields
	// above. A zero PollInterval is 10 ms, not the queue's default 100 ms:
	// an idle worker pool's wait for new tasks (5 to 15 ms with asynq's
	// jitter) is a send's latency whenever the queue runs empty, and an
	// empty poll is one cheap Redis call.
	Queue queue.RedisOptions
}

// NewNode builds the queue, the notices (subscribed within ctx, see
// NewNotifier) and the rate limit on rdb, which the caller owns and closes
// after Close.
func NewNode(ctx context.Context, rdb redis.UniversalClient, opts NodeOptions) *Node {
	qo := opts.Queue
	qo.Namespace, qo.Logger = opts.Namespace, opts.Logger
	if qo.PollInterval <= 0 {
		qo.PollInterval = 10 * time.Millisecond
	}
	return &Node{
		Queue:       queue.NewRedis(rdb, qo),
		Notifier:    NewNotifier(ctx, rdb, NotifierOptions{Namespace: opts.Namespace, Logger: opts.Logger}),
		RateLimiter: NewRateLimiter(rdb, RateLimiterOptions{Namespace: opts.Namespace, Clock: opts.Clock, Logger: opts.Logger}),
		Slots:       NewSendSlots(rdb, SendSlotsOptions{Namespace: opts.Namespace, Logger: opts.Logger}),
	}
}

// Apply makes po an engine of this node: its queue, notices and rate
// limit, with push.Options.Shared, since other processes work on the same
// store.
func (n *Node) Apply(po *push.Options) {
	po.Queue = n.Queue
	po.Notifier = n.Notifier
	po.RateLimiter = n.RateLimiter
	po.Slots = n.Slots
	po.Shared = true
}

// Close ends the notices' subscription, after the engine has stopped.
func (n *Node) Close() error { return n.Notifier.Close() }
