package pushtest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/heraldpush/herald/push"
)

// PlatformName is the name a Harness gives its Platform unless
// WithPlatformNames names others.
const PlatformName = "pushtest"

// Message is one message a Platform received.
type Message struct {
	JobID    string
	Platform string // the bot's platform name
	BotID    int64
	TargetID int64 // 0 for a send without a target
	// Address and TargetType are the target's address and the type the
	// message was sent as (empty without a target).
	Address    string
	TargetType push.TargetType
	Type       push.MsgType
	Content    string
	Image      string // the image URL of an image message
	Attempt    int    // 1 for the job's first attempt
}

// Platform is a push.Platform that sends nothing: it records each message
// it receives and answers as told (Fail, Delay). It takes any JSON object
// as a bot's config, user and group targets of any address, and every
// message type. Its methods are safe for concurrent use.
//
// A message counts as received when a send begins, except for a send
// failed with a definitive or retryable error (the platform refused it,
// or it never arrived): a send that times out or is failed with an
// uncertain error was received and its answer lost, as a real platform's
// call that times out after the request was written.
type Platform struct {
	mu      sync.Mutex
	sent    []Message
	arrived chan struct{} // closed and replaced when a message is recorded
	failN   int           // sends still to fail with failErr; negative: all
	failErr *push.SendError
	delay   time.Duration
	halt    chan struct{} // closed by stop: delays end at once
	halted  bool
}

var _ push.Platform = (*Platform)(nil)

// NewPlatform returns a Platform that delivers every message at once.
func NewPlatform() *Platform {
	return &Platform{arrived: make(chan struct{}), halt: make(chan struct{})}
}

// stop ends the delays of the sends under way and to come, as if their
// attempts timed out, so that an engine stopping does not wait for them.
func (p *Platform) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.halted {
		p.halted = true
		close(p.halt)
	}
}

// Fail makes the next n sends fail with err, or every send until Reset
// when n is negative. Make err with push.DefinitiveError (the job fails),
// push.RetryableError (the job is tried again, and succeeds once the
// failures are used up within its send window) or push.UncertainError
// (the job becomes uncertain, and the message is recorded as received).
func (p *Platform) Fail(n int, err *push.SendError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failN, p.failErr = n, err
	if err == nil {
		p.failN = 0
	}
}

// Delay makes every send take d before it answers. A send whose attempt
// ends first (push.Limits.AttemptTimeout, or the engine stopping) times
// out with an uncertain error: its message was received.
func (p *Platform) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Reset undoes Fail and Delay. The messages received so far stay.
func (p *Platform) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failN, p.failErr, p.delay = 0, nil, 0
}

// Sent returns the messages received so far, in the order they arrived.
func (p *Platform) Sent() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.sent...)
}

// Wait waits until at least n messages were received and returns them all
// (as Sent), or returns the messages so far with ctx's error when ctx ends
// first.
func (p *Platform) Wait(ctx context.Context, n int) ([]Message, error) {
	for {
		p.mu.Lock()
		sent, arrived := append([]Message(nil), p.sent...), p.arrived
		p.mu.Unlock()
		if len(sent) >= n {
			return sent, nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return sent, ctx.Err()
		}
	}
}

// Info implements push.Platform: user and group targets.
func (p *Platform) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser, push.TargetGroup}}
}

// ValidateConfig implements push.Platform: a config is a JSON object,
// with any fields.
func (p *Platform) ValidateConfig(config json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(config, &m); err != nil || m == nil {
		return push.Errorf(push.Invalid, "invalid_config", "the bot's config must be a JSON object, such as {}")
	}
	return nil
}

// ValidateTarget implements push.Platform: any address will do.
func (p *Platform) ValidateTarget(json.RawMessage, push.Target) error { return nil }

// ValidateMessage implements push.Platform: every message type is sent.
func (p *Platform) ValidateMessage(push.Message, push.TargetType) error { return nil }

// Send implements push.Platform: it records the message and answers as
// Fail and Delay say.
func (p *Platform) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	p.mu.Lock()
	var fail *push.SendError
	if p.failN != 0 {
		fail = p.failErr
		if p.failN > 0 {
			p.failN--
		}
	}
	delay, halt := p.delay, p.halt
	p.mu.Unlock()
	if fail != nil && fail.Outcome != push.OutcomeUncertain {
		// Refused, or never arrived: nothing was received.
		if err := sleep(ctx, halt, delay); err != nil {
			return push.Receipt{}, push.RetryableError(0, err)
		}
		return push.Receipt{}, fail
	}
	n := p.record(d)
	if err := sleep(ctx, halt, delay); err != nil {
		return push.Receipt{}, push.UncertainError(err)
	}
	if fail != nil {
		return push.Receipt{}, fail
	}
	return push.Receipt{PlatformIndex: PlatformName + "-" + strconv.Itoa(n)}, nil
}

// record keeps a received message and returns how many were received.
func (p *Platform) record(d push.Delivery) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, Message{
		JobID: d.JobID, Platform: d.Bot.Platform, BotID: d.Bot.ID, TargetID: d.Target.ID,
		Address: d.Target.Address, TargetType: d.AsType,
		Type: d.Message.Type, Content: d.Message.Content, Image: d.Message.ImageURL, Attempt: d.Attempt,
	})
	close(p.arrived)
	p.arrived = make(chan struct{})
	return len(p.sent)
}

// errStopped is the error of a send whose delay the Harness's Close cut
// short.
var errStopped = errors.New("pushtest: the harness stopped during the send")

// sleep waits d, or until ctx ends (its error) or halt is closed.
func sleep(ctx context.Context, halt <-chan struct{}, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-halt:
		return errStopped
	}
}
