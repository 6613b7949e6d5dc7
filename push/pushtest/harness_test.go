package pushtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/push"
)

// send submits m through the fixture's bot to its target, failing the
// test when the engine refuses it.
func send(t *testing.T, h *Harness, f Fixture, m push.Message) push.Job {
	t.Helper()
	res, err := h.Engine.Send(context.Background(), push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: m})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return res.Jobs[0]
}

// TestOutcomes sends one message per case through a fresh Harness whose
// Platform was told how to answer, and checks the job's end and what the
// platform received.
func TestOutcomes(t *testing.T) {
	hello := push.Message{Type: push.MsgTypeText, Content: "hello"}
	tests := []struct {
		name     string
		opts     []Option
		set      func(p *Platform)
		msg      push.Message
		state    push.State
		attempts int
		errHas   string
		received bool // the platform received the message
	}{
		{name: "delivered", msg: push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42"},
			state: push.StateSucceeded, attempts: 1, received: true},
		{name: "image", msg: push.Message{Type: push.MsgTypeImage, Content: "the graph", ImageURL: "https://example.com/g.png"},
			state: push.StateSucceeded, attempts: 1, received: true},
		{name: "refused", set: func(p *Platform) { p.Fail(1, push.DefinitiveError("403", "the bot was blocked")) }, msg: hello,
			state: push.StateFailed, attempts: 1, errHas: "the bot was blocked (code 403)"},
		{name: "retried", set: func(p *Platform) { p.Fail(2, push.RetryableError(0, errors.New("busy"))) }, msg: hello,
			state: push.StateSucceeded, attempts: 3, received: true},
		{name: "retried until the window ends", set: func(p *Platform) { p.Fail(-1, push.RetryableError(0, errors.New("busy"))) }, msg: hello,
			opts:  []Option{WithEngineOptions(func(o *push.Options) { o.Limits.SendWindow = 150 * time.Millisecond })},
			state: push.StateFailed, errHas: "nothing was delivered"},
		{name: "answer lost", set: func(p *Platform) { p.Fail(1, push.UncertainError(errors.New("connection reset"))) }, msg: hello,
			state: push.StateUncertain, attempts: 1, errHas: "connection reset", received: true},
		{name: "timed out", set: func(p *Platform) { p.Delay(time.Minute) }, msg: hello,
			opts:  []Option{WithEngineOptions(func(o *push.Options) { o.Limits.AttemptTimeout = 100 * time.Millisecond })},
			state: push.StateUncertain, attempts: 1, errHas: "deadline exceeded", received: true},
		{name: "slow", set: func(p *Platform) { p.Delay(200 * time.Millisecond) }, msg: hello,
			state: push.StateSucceeded, attempts: 1, received: true},
		{name: "reset", set: func(p *Platform) { p.Fail(-1, push.DefinitiveError("", "no")); p.Delay(time.Minute); p.Reset() }, msg: hello,
			state: push.StateSucceeded, attempts: 1, received: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(t, tt.opts...)
			f := h.Seed(t)
			if tt.set != nil {
				tt.set(h.Platform)
			}
			j := h.Settled(t, send(t, h, f, tt.msg).ID)
			if j.State != tt.state || !strings.Contains(j.Error, tt.errHas) || (tt.attempts > 0 && j.Attempts != tt.attempts) {
				t.Fatalf("job %s after %d attempts (%q), want %s after %d, its error holding %q", j.State, j.Attempts, j.Error, tt.state, tt.attempts, tt.errHas)
			}
			var want []Message
			if tt.received {
				want = []Message{{JobID: j.ID, Platform: PlatformName, BotID: f.Bot.ID, TargetID: f.Target.ID, Address: "user-1",
					TargetType: push.TargetUser, Type: tt.msg.Type, Content: tt.msg.Content, Image: tt.msg.ImageURL, Attempt: j.Attempts}}
			}
			if diff := cmp.Diff(want, h.Platform.Sent()); diff != "" {
				t.Errorf("received (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailCounts checks that Fail(n, …) fails n sends and no more, and
// that a negative n fails every send until Reset.
func TestFailCounts(t *testing.T) {
	h := New(t)
	f := h.Seed(t)
	states := func() []push.State {
		var got []push.State
		for range 3 {
			got = append(got, h.Settled(t, send(t, h, f, push.Message{Content: "x"}).ID).State)
		}
		return got
	}
	h.Platform.Fail(2, push.DefinitiveError("", "refused"))
	if diff := cmp.Diff([]push.State{push.StateFailed, push.StateFailed, push.StateSucceeded}, states()); diff != "" {
		t.Errorf("Fail(2): (-want +got):\n%s", diff)
	}
	h.Platform.Fail(-1, push.DefinitiveError("", "refused"))
	if diff := cmp.Diff([]push.State{push.StateFailed, push.StateFailed, push.StateFailed}, states()); diff != "" {
		t.Errorf("Fail(-1): (-want +got):\n%s", diff)
	}
	h.Platform.Reset()
	if diff := cmp.Diff([]push.State{push.StateSucceeded, push.StateSucceeded, push.StateSucceeded}, states()); diff != "" {
		t.Errorf("after Reset: (-want +got):\n%s", diff)
	}
	if got := len(h.Platform.Sent()); got != 4 {
		t.Errorf("the platform received %d messages, want the 4 it did not refuse", got)
	}
}

// TestSlowSendIsPending checks that a send slower than the synchronous
// wait answers with its job pending, and that WaitSent sees it arrive.
func TestSlowSendIsPending(t *testing.T) {
	h := New(t, WithEngineOptions(func(o *push.Options) { o.Limits.SyncWait = 50 * time.Millisecond }))
	f := h.Seed(t)
	h.Platform.Delay(500 * time.Millisecond)
	res, err := h.Engine.Send(context.Background(), push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID,
		Message: push.Message{Content: "later"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pending() {
		t.Fatalf("the send answered %s, want the job pending", res.Jobs[0].State)
	}
	if sent := h.WaitSent(t, 1); sent[0].Content != "later" {
		t.Errorf("received %+v", sent)
	}
	if j := h.Settled(t, res.Jobs[0].ID); j.State != push.StateSucceeded {
		t.Errorf("job %s (%s), want succeeded", j.State, j.Error)
	}
}

// TestPoints checks that Account sets the balance it is given and that an
// engine charging points spends it.
func TestPoints(t *testing.T) {
	h := New(t, WithEngineOptions(func(o *push.Options) { o.Points = push.Points{Enabled: true} }))
	for _, points := range []int64{0, 1, 100, 250} {
		if a := h.Account(t, fmt.Sprint("account with ", points), points); a.Points != points {
			t.Errorf("Account(…, %d) has %d points", points, a.Points)
		}
	}
	a := h.Account(t, "poor", 1)
	b := h.Bot(t, a.ID)
	f := Fixture{Account: a, Bot: b, Target: h.Target(t, b.ID, push.TargetGroup, "")}
	if j := send(t, h, f, push.Message{Content: "one"}); j.Cost != 1 {
		t.Errorf("the first send cost %d, want 1", j.Cost)
	}
	_, err := h.Engine.Send(context.Background(), push.AccountPrincipal(a.ID), push.SendRequest{BotID: b.ID, TargetID: f.Target.ID, Message: push.Message{Content: "two"}})
	if push.ReasonOf(err) != "insufficient_points" {
		t.Errorf("the second send: %v, want insufficient_points", err)
	}
	if got := h.WaitSent(t, 1); len(got) != 1 || got[0].TargetType != push.TargetGroup || got[0].Address != "group-1" {
		t.Errorf("received %+v, want one message to group-1", got)
	}
}

// TestPlatformNames checks that the Platform answers for every name given
// and that bots are made on the first.
func TestPlatformNames(t *testing.T) {
	h := New(t, WithPlatformNames("telegram", "ntfy"))
	if diff := cmp.Diff([]string{"ntfy", "telegram"}, h.Engine.PlatformNames()); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	f := h.Seed(t)
	if f.Bot.Platform != "telegram" {
		t.Errorf("Seed's bot is on %q, want telegram", f.Bot.Platform)
	}
	send(t, h, f, push.Message{Content: "hi"})
	if got := h.WaitSent(t, 1); got[0].Platform != "telegram" {
		t.Errorf("received %+v, want a telegram message", got[0])
	}
	if _, err := Open(context.Background(), WithPlatformNames()); err == nil {
		t.Error("Open with no platform name succeeded")
	}
}

// TestConfigRefused checks that a bot's config must be a JSON object.
func TestConfigRefused(t *testing.T) {
	h := New(t)
	a := h.Account(t, "acme", 0)
	for _, cfg := range []string{`[]`, `"x"`, `null`, `{`} {
		_, err := h.Engine.Bots().Create(context.Background(), push.System(), push.Bot{AccountID: a.ID, Platform: PlatformName, Name: "b", Config: []byte(cfg)})
		if push.ReasonOf(err) != "invalid_config" {
			t.Errorf("config %s: %v, want invalid_config", cfg, err)
		}
	}
}

// TestPrivate checks that two Harnesses share nothing and that Close
// stops the engine, more than once without error.
func TestPrivate(t *testing.T) {
	ctx := context.Background()
	h1, h2 := New(t), New(t)
	f := h1.Seed(t)
	page, err := h2.Engine.Accounts().List(ctx, push.System(), push.AccountFilter{})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("the second Harness lists %v (%v), want no account", page.Items, err)
	}
	if err := h1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h1.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	_, err = h1.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: push.Message{Content: "x"}})
	if err == nil {
		t.Error("a closed Harness's engine took a send")
	}
}

// fakeT records a helper's failure instead of ending the test.
type fakeT struct{ failed string }

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	if f.failed == "" {
		f.failed = fmt.Sprintf(format, args...)
	}
}

// TestWaitsFail checks that WaitSent and Settled fail the test, saying
// what they waited for, when it does not come in time.
func TestWaitsFail(t *testing.T) {
	h := New(t, WithEngineOptions(func(o *push.Options) { o.Limits.SyncWait = time.Millisecond }))
	f := h.Seed(t)
	send(t, h, f, push.Message{Content: "one"})
	var ft fakeT
	if got := waitSent(&ft, h.Platform, 1, time.Second); len(got) != 1 || ft.failed != "" {
		t.Fatalf("waitSent for the one message: %v, failed %q", got, ft.failed)
	}
	if got := waitSent(&ft, h.Platform, 2, 50*time.Millisecond); len(got) != 1 || !strings.Contains(ft.failed, "received 1 messages in 50ms, want 2") {
		t.Errorf("waitSent for a second message returned %v and failed with %q", got, ft.failed)
	}

	h.Platform.Delay(time.Minute)
	j := send(t, h, f, push.Message{Content: "two"})
	ft = fakeT{}
	if got := settled(&ft, h.Engine, j.ID, 50*time.Millisecond); got.State != push.StateRunning || !strings.Contains(ft.failed, "is still running after 50ms") {
		t.Errorf("settled on a job being sent returned %s and failed with %q", got.State, ft.failed)
	}
	ft = fakeT{}
	if settled(&ft, h.Engine, push.NewJobID(), time.Second); !strings.Contains(ft.failed, "does not exist") {
		t.Errorf("settled on an unknown job failed with %q", ft.failed)
	}
}
