package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/redis/go-redis/v9"
)

// Notifier is a push.Notifier over Redis pub/sub. Notify wakes the waiters
// of this process at once and publishes the job ids on the namespace's
// channel; every node's Notifier listens on the channel and wakes its own
// waiters. A notice is a hint (the waiter reads the job from the store and
// the engine polls as well), so a notice lost while Redis is away costs
// time, never correctness.
type Notifier struct {
	rdb     redis.UniversalClient
	channel string
	node    string // this process, so that it skips its own publications
	local   *push.LocalNotifier
	log     *slog.Logger

	pubsub *redis.PubSub
	done   chan struct{}
	once   sync.Once
}

var _ push.Notifier = (*Notifier)(nil)

// NotifierOptions configure a Notifier.
type NotifierOptions struct {
	// Namespace keeps Herald installations that share one Redis apart
	// (default "herald").
	Namespace string
	// Logger receives Redis trouble.
	Logger *slog.Logger
}

// NewNotifier subscribes to the namespace's channel on rdb (which the
// caller owns and closes after Close) and returns the Notifier. It waits
// up to ctx for the subscription to be confirmed; when Redis cannot be
// reached it returns the Notifier anyway, which subscribes as soon as
// Redis is back.
func NewNotifier(ctx context.Context, rdb redis.UniversalClient, opts NotifierOptions) *Notifier {
	if opts.Namespace == "" {
		opts.Namespace = "herald"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	n := &Notifier{
		rdb:     rdb,
		channel: opts.Namespace + ":settled",
		node:    hex.EncodeToString(b),
		local:   push.NewLocalNotifier(),
		log:     opts.Logger,
		done:    make(chan struct{}),
	}
	n.pubsub = rdb.Subscribe(ctx, n.channel)
	if _, err := n.pubsub.Receive(ctx); err != nil {
		n.log.Warn("completion notices: cannot subscribe yet; waiting requests poll the store until Redis is back", "err", err)
	}
	go n.listen()
	return n
}

// listen hands the notices of other nodes to the local waiters. go-redis
// resubscribes by itself after a lost connection.
func (n *Notifier) listen() {
	defer close(n.done)
	for msg := range n.pubsub.Channel(redis.WithChannelHealthCheckInterval(5 * time.Second)) {
		node, ids, ok := strings.Cut(msg.Payload, " ")
		if !ok || node == n.node {
			continue
		}
		_ = n.local.Notify(context.Background(), strings.Fields(ids)...)
	}
}

// Notify implements push.Notifier.
func (n *Notifier) Notify(ctx context.Context, jobIDs ...string) error {
	if len(jobIDs) == 0 {
		return nil
	}
	_ = n.local.Notify(ctx, jobIDs...)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := n.rdb.Publish(ctx, n.channel, n.node+" "+strings.Join(jobIDs, " ")).Err(); err != nil {
		return &push.Error{Kind: push.Unavailable, Reason: "notices_unavailable", Message: "completion notice not published", Err: err}
	}
	return nil
}

// Subscribe implements push.Notifier.
func (n *Notifier) Subscribe(jobIDs []string) (<-chan string, func()) {
	return n.local.Subscribe(jobIDs)
}

// Close ends the subscription.
func (n *Notifier) Close() error {
	var err error
	n.once.Do(func() {
		err = n.pubsub.Close()
		<-n.done
	})
	if errors.Is(err, redis.ErrClosed) {
		return nil
	}
	return err
}
