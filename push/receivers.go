package push

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// Receivers: the engine runs one outbound receiver per listening bot
// across all nodes. A node that wants to run a bot's receiver takes its
// lease in the store (a compare-and-set on the holder and the lease's
// end) and renews it while it runs; when the node dies, the lease runs out
// and another node takes the bot within a lease. Where the receiver is in
// the platform's stream (its cursor) is saved in the store, so the next
// holder goes on from there, and every event is handled once (by its id).

// Receiver is the state of a bot's receiver in the store.
type Receiver struct {
	BotID      int64
	Holder     string    // the node running it
	LeaseUntil time.Time // the holder's lease ends then unless renewed
	Cursor     string
	Setup      string // what the holder set up (a webhook URL), so it is set once
	Failures   int
	Error      string
	FailedAt   time.Time
	EventAt    time.Time // the last event received
}

// Receivers configure the engine's outbound receivers.
type Receivers struct {
	// Off runs no receiver on this node (webhooks are still answered).
	Off bool
	// Lease is how long a node's hold on a bot's receiver lasts unless
	// renewed; another node takes over within it after the holder died
	// (default 15 s; it is renewed every third of it).
	Lease time.Duration
	// MaxBackoff caps the wait after a receiver failed (default 5 min;
	// the first wait is a second, and it doubles).
	MaxBackoff time.Duration
	// PublicURL is where platforms reach this service; a bot in webhook
	// mode whose platform registers webhooks through its API (Telegram) is
	// pointed at PublicURL + WebhookPath.
	PublicURL string
}

func (r Receivers) withDefaults() Receivers {
	if r.Lease <= 0 {
		r.Lease = 15 * time.Second
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = 5 * time.Minute
	}
	return r
}

// receiverSet is this node's running receivers, by bot.
type receiverSet struct {
	mu      sync.Mutex
	running map[int64]*runningReceiver
	node    string // this node's holder name
}

type runningReceiver struct {
	config string // the bot's config hash it runs with
	cancel context.CancelFunc
	done   chan struct{}
}

func (rs *receiverSet) init() {
	rs.running = make(map[int64]*runningReceiver)
	rs.node = randomCode(12, base62)
}

// configHash names a bot's config, to tell when it changed.
func configHash(b Bot) string {
	sum := sha256.Sum256(append([]byte(b.Platform+"\x00"), b.Config...))
	return hex.EncodeToString(sum[:8])
}

// runReceivers keeps this node's share of the receivers running until ctx
// ends: every third of a lease it takes or renews the leases of the
// listening bots it can, starts their receivers, and stops the ones whose
// bot stopped listening, changed or went to another node.
func (e *Engine) runReceivers(ctx context.Context) {
	if e.recvOpts.Off {
		return
	}
	tick := time.NewTicker(e.recvOpts.Lease / 3)
	defer tick.Stop()
	defer e.stopReceivers()
	for {
		if err := e.tendReceivers(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("tending the receivers failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// listeningPlatforms are the platforms that hear their bots.
func (e *Engine) listeningPlatforms() []string {
	var out []string
	for _, name := range e.PlatformNames() {
		if _, ok := e.platforms[name].(EventSource); ok {
			out = append(out, name)
		}
	}
	return out
}

// tendReceivers does one round of runReceivers.
func (e *Engine) tendReceivers(ctx context.Context) error {
	names := e.listeningPlatforms()
	if len(names) == 0 {
		return nil
	}
	bots, err := e.store.ListeningBots(ctx, names)
	if err != nil {
		return err
	}
	want := make(map[int64]Bot)
	for _, b := range bots {
		src := e.platforms[b.Platform].(EventSource)
		mode := src.ReceiveMode(b.Config)
		_, setter := src.(WebhookSetter)
		// Outbound receivers run; a webhook needs a node only to register
		// it with the platform.
		if mode == ReceiveOutbound || mode == ReceiveWebhook && setter {
			want[b.ID] = b
		}
	}
	rs := &e.receivers
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for id, r := range rs.running {
		b, ok := want[id]
		if !ok || configHash(b) != r.config {
			r.cancel()
			<-r.done
			delete(rs.running, id)
			_ = e.store.ReleaseReceiver(context.WithoutCancel(ctx), id, rs.node)
		}
	}
	now := e.clock.Now()
	for id, b := range want {
		held, err := e.store.AcquireReceiver(ctx, id, rs.node, now, now.Add(e.recvOpts.Lease))
		if err != nil {
			return err
		}
		r, running := rs.running[id]
		switch {
		case !held && running:
			// The lease went to another node (this one stalled): stop.
			r.cancel()
			<-r.done
			delete(rs.running, id)
		case held && !running:
			rctx, cancel := context.WithCancel(ctx)
			r = &runningReceiver{config: configHash(b), cancel: cancel, done: make(chan struct{})}
			rs.running[id] = r
			go e.receive(rctx, b, r.done)
		}
	}
	return nil
}

// stopReceivers stops this node's receivers and gives up their leases.
func (e *Engine) stopReceivers() {
	rs := &e.receivers
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for id, r := range rs.running {
		r.cancel()
		<-r.done
		_ = e.store.ReleaseReceiver(context.Background(), id, rs.node)
	}
	clear(rs.running)
}

// receive runs a bot's receiver until ctx ends: from its saved cursor, and
// again after each failure, waiting a second, then twice as long each
// time up to MaxBackoff (a receiver that failed is never run in a loop).
func (e *Engine) receive(ctx context.Context, b Bot, done chan struct{}) {
	defer close(done)
	src := e.platforms[b.Platform].(EventSource)
	mode := src.ReceiveMode(b.Config)
	sink := &eventSink{e: e, bot: b, holder: e.receivers.node}
	wait := time.Second
	for ctx.Err() == nil {
		err := e.receiveOnce(ctx, b, src, mode, sink)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if mode == ReceiveWebhook {
				<-ctx.Done() // registered: hold the lease so no other node does it again
				return
			}
			wait = time.Second
			continue
		}
		e.obs.ReceiverFailed(b.Platform)
		e.log.Warn("a bot's receiver failed; it runs again later", "bot", b.ID, "platform", b.Platform, "wait", wait, "err", err)
		if serr := e.store.ReceiverFailed(context.WithoutCancel(ctx), b.ID, e.clock.Now(), truncate(err.Error(), 500)); serr != nil {
			e.log.Warn("recording a receiver's failure failed", "bot", b.ID, "err", serr)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(wait*2, e.recvOpts.MaxBackoff)
	}
}

// receiveOnce sets up a bot's webhook or runs its outbound receiver once.
func (e *Engine) receiveOnce(ctx context.Context, b Bot, src EventSource, mode ReceiveMode, sink *eventSink) error {
	r, err := e.store.Receiver(ctx, b.ID)
	if err != nil && !IsKind(err, NotFound) {
		return err
	}
	if setter, ok := src.(WebhookSetter); ok {
		url := ""
		if mode == ReceiveWebhook {
			if e.recvOpts.PublicURL == "" {
				return Errorf(Invalid, "no_public_url", "the bot takes webhooks, but the server has no public URL to give the platform: set one (herald serve --public-url)")
			}
			url = e.recvOpts.PublicURL + WebhookPath(b.ID)
		}
		setup := configHash(b) + " " + url
		if r.Setup != setup {
			if err := setter.SetWebhook(ctx, b, url); err != nil {
				return err
			}
			if err := e.store.SaveSetup(ctx, b.ID, sink.holder, setup); err != nil {
				return err
			}
		}
	}
	if mode == ReceiveWebhook {
		return nil
	}
	return src.Receive(ctx, b, r.Cursor, sink)
}
