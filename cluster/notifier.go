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

	// The notices waiting for a publication, and whether one is under
	// way: the notices that come while one is under way go out together
	// in the next, so that a busy node publishes once per round trip
	// rather than once per job.
	mu         sync.Mutex
	publishing bool
	pending    []string
	waiting    []chan error
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

// publishTimeout bounds one publication.
const publishTimeout = 2 * time.Second

// Notify implements push.Notifier: it wakes this process's waiters at
// once and returns when the notices are published (with those of other
// callers that came while a publication was under way).
func (n *Notifier) Notify(ctx context.Context, jobIDs ...string) error {
	if len(jobIDs) == 0 {
		return nil
	}
	_ = n.local.Notify(ctx, jobIDs...)
	done := make(chan error, 1)
	n.mu.Lock()
	n.pending = append(n.pending, jobIDs...)
	n.waiting = append(n.waiting, done)
	if !n.publishing {
		n.publishing = true
		go n.publish()
	}
	n.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publish publishes the pending notices, one message per round, until
// none are left.
func (n *Notifier) publish() {
	var payload strings.Builder
	for {
		n.mu.Lock()
		ids, waiting := n.pending, n.waiting
		n.pending, n.waiting = nil, nil
		if len(ids) == 0 {
			n.publishing = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		payload.Reset()
		payload.WriteString(n.node)
		for _, id := range ids {
			payload.WriteByte(' ')
			payload.WriteString(id)
		}
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		err := n.rdb.Publish(ctx, n.channel, payload.String()).Err()
		cancel()
		if err != nil {
			err = &push.Error{Kind: push.Unavailable, Reason: "notices_unavailable", Message: "completion notice not published", Err: err}
		}
		for _, w := range waiting {
			w <- err
		}
	}
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
