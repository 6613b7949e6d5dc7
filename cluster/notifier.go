package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
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
//
// NotifySettled publishes the settled jobs' rows with their ids (see
// push.SettledNotifier): a node with a waiter for one of them hands the
// row to its engine before it wakes the waiter, which then answers without
// reading the store. A message is its publisher and the ids on its first
// line, then one line per row: the row's id, a space, and the row as
// JSON. A node decodes only the rows of the jobs its own requests wait
// for, so that with many API nodes each decodes its own share of a
// worker's notices rather than all of them.
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
	rows       []push.Job // the pending notices' rows, of those that carry one
	waiting    []chan error

	onSettled atomic.Pointer[func(push.Job)] // set by the engine (push.New)

	// A node that no other node listens to publishes nothing (see
	// aloneFor): heard is when its own subscription last delivered one of
	// its publications (Unix nanoseconds), alone until when it skips
	// them.
	heard, alone atomic.Int64
}

// aloneFor is how long a node whose publication reached no other node
// (PUBLISH counted its own subscription alone) publishes nothing: a
// single node on Redis spares the publications and the encoding of their
// rows. A node that starts within that time misses the notices of the
// jobs this node settles meanwhile, and its waiters find them by polling
// the store, as for any lost notice; the next publication counts it.
const aloneFor = time.Second

var _ push.SettledNotifier = (*Notifier)(nil)

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
		head, rows, _ := strings.Cut(msg.Payload, "\n")
		node, list, ok := strings.Cut(head, " ")
		if ok && node == n.node {
			n.heard.Store(time.Now().UnixNano()) // the subscription works
		}
		if !ok || node == n.node {
			continue
		}
		ids := strings.Fields(list)
		if fn := n.onSettled.Load(); rows != "" && fn != nil {
			n.handOver(rows, *fn)
		}
		_ = n.local.Notify(context.Background(), ids...)
	}
}

// handOver gives the engine the rows of a notice whose jobs a waiter of
// this process waits for, and decodes no other. A row that cannot be read
// is left out: its waiter reads the store, as for a notice without rows.
func (n *Notifier) handOver(rows string, onSettled func(push.Job)) {
	for rows != "" {
		var line string
		line, rows, _ = strings.Cut(rows, "\n")
		id, row, ok := strings.Cut(line, " ")
		if !ok || !n.local.Waiting(id) {
			continue
		}
		var j push.Job
		if err := json.Unmarshal([]byte(row), &j); err != nil || j.ID != id {
			n.log.Warn("completion notices: a row that cannot be read; its waiter reads the store", "job", id, "err", err)
			continue
		}
		onSettled(j)
	}
}

// OnSettled implements push.SettledNotifier (push.New sets it).
func (n *Notifier) OnSettled(fn func(push.Job)) { n.onSettled.Store(&fn) }

// NotifySettled implements push.SettledNotifier: Notify, with the jobs'
// rows carried to the other nodes.
func (n *Notifier) NotifySettled(ctx context.Context, jobs ...push.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return n.notify(ctx, ids, jobs)
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
	return n.notify(ctx, jobIDs, nil)
}

func (n *Notifier) notify(ctx context.Context, jobIDs []string, rows []push.Job) error {
	_ = n.local.Notify(ctx, jobIDs...)
	done := make(chan error, 1)
	n.mu.Lock()
	n.pending = append(n.pending, jobIDs...)
	n.rows = append(n.rows, rows...)
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
		ids, rows, waiting := n.pending, n.rows, n.waiting
		n.pending, n.rows, n.waiting = nil, nil, nil
		if len(ids) == 0 {
			n.publishing = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		if time.Now().UnixNano() < n.alone.Load() {
			for _, w := range waiting {
				w <- nil // nobody else listens
			}
			continue
		}
		payload.Reset()
		payload.WriteString(n.node)
		for _, id := range ids {
			payload.WriteByte(' ')
			payload.WriteString(id)
		}
		for _, row := range rows {
			b, err := json.Marshal(row)
			if err != nil {
				n.log.Warn("completion notices: a row left out", "job", row.ID, "err", err) // its waiter reads the store
				continue
			}
			payload.WriteByte('\n')
			payload.WriteString(row.ID)
			payload.WriteByte(' ')
			payload.Write(b)
		}
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		receivers, err := n.rdb.Publish(ctx, n.channel, payload.String()).Result()
		cancel()
		if err == nil && n.reachedNoOther(receivers) {
			n.alone.Store(time.Now().Add(aloneFor).UnixNano())
		}
		if err != nil {
			err = &push.Error{Kind: push.Unavailable, Reason: "notices_unavailable", Message: "completion notice not published", Err: err}
		}
		for _, w := range waiting {
			w <- err
		}
	}
}

// reachedNoOther tells whether a publication that receivers
// subscriptions received reached no other node: none did, or one did and
// this node's own subscription delivered its publications lately (so
// that the one was its own).
func (n *Notifier) reachedNoOther(receivers int64) bool {
	switch receivers {
	case 0:
		return true
	case 1:
		return time.Since(time.Unix(0, n.heard.Load())) < 2*aloneFor
	}
	return false
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
