package qq_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/qq"
	"github.com/heraldpush/herald/push"
)

const secret = "s3cr3tAppSecretValue0123456789"

func TestValidateConfig(t *testing.T) {
	p := qq.New(nil)
	tests := []struct {
		name   string
		config string
		field  string // "" for a valid config
	}{
		{"valid", `{"app_id":"102012345","client_secret":"` + secret + `"}`, ""},
		{"valid sandbox", `{"app_id":"102012345","client_secret":"` + secret + `","sandbox":true}`, ""},
		{"valid hosts", `{"app_id":"1","client_secret":"` + secret + `","api_base":"https://proxy.example.com/qq","token_base":"http://10.0.0.1:8080"}`, ""},
		{"missing app_id", `{"client_secret":"` + secret + `"}`, "app_id is missing"},
		{"numeric app_id", `{"app_id":102012345,"client_secret":"` + secret + `"}`, "field app_id must be a string"},
		{"malformed app_id", `{"app_id":"bot-1","client_secret":"` + secret + `"}`, "app_id is malformed"},
		{"missing client_secret", `{"app_id":"102012345"}`, "client_secret is missing"},
		{"client_secret with a space", `{"app_id":"102012345","client_secret":"` + secret + ` x"}`, "client_secret is malformed"},
		{"sandbox and api_base", `{"app_id":"1","client_secret":"` + secret + `","sandbox":true,"api_base":"https://x.example"}`, "sandbox is malformed"},
		{"api_base not a URL", `{"app_id":"1","client_secret":"` + secret + `","api_base":"ftp://x"}`, "api_base is malformed"},
		{"token_base with a query", `{"app_id":"1","client_secret":"` + secret + `","token_base":"https://x.example?k=` + secret + `"}`, "token_base is malformed"},
		{"unknown field", `{"app_id":"1","client_secret":"` + secret + `","token":"x"}`, `unknown field "token"`},
		{"not an object", `["` + secret + `"]`, "qq bot config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.ValidateConfig(json.RawMessage(tc.config))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if err == nil || !push.IsKind(err, push.Invalid) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %v, want Invalid naming %q", err, tc.field)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q quotes the secret", err)
			}
		})
	}
}

func TestValidateTargetAndMessage(t *testing.T) {
	p := qq.New(nil)
	targets := []struct {
		tt   push.TargetType
		addr string
		ok   bool
	}{
		{push.TargetUser, "E4F4AEA33253A2797FB897C50B81D7ED", true},
		{push.TargetGroup, "C9F778FE6ADF9D1D1DBE395BF744A33A", true},
		{push.TargetUser, "has space", false},
		{push.TargetGroup, "group/../x", false},
		{push.TargetUser, strings.Repeat("A", 129), false},
	}
	for _, tc := range targets {
		err := p.ValidateTarget(nil, push.Target{Type: tc.tt, Address: tc.addr})
		if (err == nil) != tc.ok {
			t.Errorf("ValidateTarget(%s %q) = %v, want ok=%v", tc.tt, tc.addr, err, tc.ok)
		}
	}
	messages := []struct {
		m  push.Message
		tt push.TargetType
		ok bool
	}{
		{push.Message{Type: push.MsgTypeText, Content: "x", Wakeup: true}, push.TargetUser, true},
		{push.Message{Type: push.MsgTypeText, Content: "x", Wakeup: true}, push.TargetGroup, false},
		{push.Message{Type: push.MsgTypeMarkdown, Content: "**x**"}, push.TargetGroup, true},
		{push.Message{Type: push.MsgTypeImage, ImageURL: "https://example.com/a.png", Wakeup: true}, push.TargetGroup, false},
	}
	for _, tc := range messages {
		err := p.ValidateMessage(tc.m, tc.tt)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateMessage(%+v, %s) = %v, want ok=%v", tc.m, tc.tt, err, tc.ok)
		}
	}
}

// fakeClock is a settable clock for the token cache.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestTokenRefreshedEarly drives the provider directly with a clock the
// test moves: a token is reused while fresh and fetched again shortly
// before it expires, so that no send ever carries an expired token.
func TestTokenRefreshedEarly(t *testing.T) {
	f := fake.NewQQ(t)
	appID, sec := f.NewApp()
	f.SetProactive(appID, true)
	f.AddUser("U1")
	clock := &fakeClock{now: time.Now()}
	p := qq.New(platforms.NewEnv(platforms.Options{Now: clock.Now, NoPacing: true}))
	d := push.Delivery{JobID: "j", Bot: push.Bot{Platform: "qq", Config: f.BotConfig(appID, sec)},
		Target: push.Target{Type: push.TargetUser, Address: "U1"}, AsType: push.TargetUser, Message: push.Message{Type: push.MsgTypeText, Content: "x"}}
	steps := []struct {
		advance time.Duration
		fetches int
	}{
		{0, 1},
		{time.Hour, 1},                    // fresh: reused
		{50 * time.Minute, 1},             // 10 min left: still reused
		{6 * time.Minute, 2},              // 4 min left: fetched again ahead of expiry
		{10 * time.Minute, 2},             // the new token (its own 2 h) is reused
		{2*time.Hour - 13*time.Minute, 3}, // 3 min left: replaced ahead of expiry
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if _, err := p.Send(ctx, d); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if n := f.TokenFetches(); n != s.fetches {
			t.Fatalf("step %d: %d token fetches, want %d", i, n, s.fetches)
		}
	}
	if n := f.Requests("messages"); n != len(steps) {
		t.Fatalf("%d message requests for %d sends: a token was refused", n, len(steps))
	}
}

// TestSendErrorOutcomes checks the outcome the provider reports, which
// the engine turns into the job's state.
func TestSendErrorOutcomes(t *testing.T) {
	f := fake.NewQQ(t)
	appID, sec := f.NewApp()
	f.SetProactive(appID, true)
	f.AddUser("U1")
	f.AddGroup("G1")
	p := qq.New(nil)
	deliver := func(tt push.TargetType, addr string, m push.Message) error {
		_, err := p.Send(ctx, push.Delivery{JobID: "j", Bot: push.Bot{Platform: "qq", Config: f.BotConfig(appID, sec)},
			Target: push.Target{Type: tt, Address: addr}, AsType: tt, Message: m})
		return err
	}
	tests := []struct {
		name    string
		fault   *fake.QQFault
		tt      push.TargetType
		addr    string
		m       push.Message
		outcome push.Outcome
		code    string
	}{
		{name: "unknown user", tt: push.TargetUser, addr: "NOBODY", m: text("x"), outcome: push.OutcomeDefinitive, code: "40034003"},
		{name: "rate limit", fault: &fake.QQFault{Status: 400, Code: 22009, Message: "msg limit exceed"}, tt: push.TargetUser, addr: "U1", m: text("x"), outcome: push.OutcomeRetryable, code: "22009"},
		{name: "gateway 504", fault: &fake.QQFault{Status: 504, HTML: true}, tt: push.TargetGroup, addr: "G1", m: text("x"), outcome: push.OutcomeUncertain},
		{name: "image URL unreachable", tt: push.TargetGroup, addr: "G1", m: push.Message{Type: push.MsgTypeImage, ImageURL: "http://127.0.0.1:1/x.png"}, outcome: push.OutcomeRetryable, code: "304082"},
		{name: "upload answer is a gateway page", fault: &fake.QQFault{On: "files", Status: 502, HTML: true}, tt: push.TargetUser, addr: "U1",
			m: push.Message{Type: push.MsgTypeImage, ImageURL: "https://example.com/x.png"}, outcome: push.OutcomeRetryable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fault != nil {
				f.Fail(*tc.fault)
			}
			err := deliver(tc.tt, tc.addr, tc.m)
			se := push.AsSendError(err)
			if err == nil || se.Outcome != tc.outcome || se.Code != tc.code {
				t.Fatalf("error %v (outcome %s, code %q), want %s with code %q", err, se.Outcome, se.Code, tc.outcome, tc.code)
			}
		})
	}
}
