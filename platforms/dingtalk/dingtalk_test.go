package dingtalk_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/dingtalk"
	"github.com/heraldpush/herald/push"
)

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewDingTalk(t)
	acct := h.Account(t, "acme")
	token, secret := f.NewRobot(fake.DingTalkSecurity{Sign: true})
	bot := h.PlatformBot(t, acct.ID, "dingtalk", map[string]any{"access_token": token, "secret": secret, "api_base": f.URL()})
	tests := []struct {
		name string
		msg  push.Message
		want fake.DingTalkMessage
	}{
		{"text", push.Message{Content: "disk *full* on db1"},
			fake.DingTalkMessage{MsgType: "text", Content: "disk *full* on db1"}},
		{"markdown with a derived title", push.Message{Type: push.MsgTypeMarkdown, Content: "### **Deployed** v42\n\n- api\n- web"},
			fake.DingTalkMessage{MsgType: "markdown", Title: "Deployed v42", Text: "### **Deployed** v42\n\n- api\n- web"}},
		{"image as a Markdown image", push.Message{Type: push.MsgTypeImage, Content: "CPU [prod]", ImageURL: "https://img.example.com/cpu.png"},
			fake.DingTalkMessage{MsgType: "markdown", Title: "CPU [prod]", Text: "CPU \\[prod\\]\n\n![CPU \\[prod\\]](https://img.example.com/cpu.png)"}},
		{"image without caption", push.Message{Type: push.MsgTypeImage, ImageURL: "https://img.example.com/cpu.png"},
			fake.DingTalkMessage{MsgType: "markdown", Title: "cpu.png", Text: "![cpu.png](https://img.example.com/cpu.png)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, bot.ID, tt.msg)
			if j.State != push.StateSucceeded || j.PlatformIndex != "" {
				t.Fatalf("job %s %q platformIndex %q", j.State, j.Error, j.PlatformIndex)
			}
			msgs := f.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("dingtalk received %d messages, want 1", len(msgs)-before)
			}
			tt.want.Token, tt.want.Signed = token, true
			if diff := cmp.Diff(tt.want, msgs[before]); diff != "" {
				t.Errorf("dingtalk received (-want +got):\n%s", diff)
			}
		})
	}
}

// The robot's security settings are reported clearly, and keywords listed
// in the bot config are checked before anything is charged.
func TestSecurity(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := fake.NewDingTalk(t)
	acct := h.Account(t, "acme")
	signed, secret := f.NewRobot(fake.DingTalkSecurity{Sign: true})
	_, otherSecret := f.NewRobot(fake.DingTalkSecurity{Sign: true})
	kw, _ := f.NewRobot(fake.DingTalkSecurity{Keywords: []string{"告警", "alert"}})
	walled, _ := f.NewRobot(fake.DingTalkSecurity{AllowIPs: []string{"10.1.2.3"}})
	tests := []struct {
		name    string
		cfg     map[string]any
		skew    time.Duration
		content string
		state   push.State
		errHas  string
	}{
		{"signed", map[string]any{"access_token": signed, "secret": secret}, 0, "hi", push.StateSucceeded, ""},
		{"signed within the hour", map[string]any{"access_token": signed, "secret": secret}, 50 * time.Minute, "hi", push.StateSucceeded, ""},
		{"wrong secret", map[string]any{"access_token": signed, "secret": otherSecret}, 0, "hi", push.StateFailed,
			"dingtalk: sign not match: the signature does not match: set secret in the bot config to the robot's 加签 secret (code 310000)"},
		{"no secret for a signing robot", map[string]any{"access_token": signed}, 0, "hi", push.StateFailed, "sign not match"},
		{"clock off by two hours", map[string]any{"access_token": signed, "secret": secret}, 2 * time.Hour, "hi", push.StateFailed,
			"invalid timestamp: this server's clock is more than an hour away from DingTalk's: correct the clock (code 310000)"},
		{"keyword missing", map[string]any{"access_token": kw}, 0, "disk full", push.StateFailed,
			"keywords not in content: the robot's security settings require one of its custom keywords in every message"},
		{"keyword present", map[string]any{"access_token": kw}, 0, "alert: disk full", push.StateSucceeded, ""},
		{"IP allow-list", map[string]any{"access_token": walled}, 0, "hi", push.StateFailed,
			"ip 127.0.0.1 not in whitelist: the robot only takes requests from its IP allow-list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.SetClockSkew(tt.skew)
			tt.cfg["api_base"] = f.URL()
			bot := h.PlatformBot(t, acct.ID, "dingtalk", tt.cfg)
			j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: tt.content})
			if j.State != tt.state || !strings.Contains(j.Error, tt.errHas) {
				t.Fatalf("job %s %q, want %s with %q", j.State, j.Error, tt.state, tt.errHas)
			}
			for _, s := range []string{signed, secret, otherSecret, kw, walled} {
				if strings.Contains(j.Error, s) {
					t.Errorf("the job's error %q shows a credential", j.Error)
				}
			}
		})
	}
	f.SetClockSkew(0)

	// Keywords in the config: a message without one is refused up front.
	bot := h.PlatformBot(t, acct.ID, "dingtalk", map[string]any{"access_token": kw, "keywords": []string{"告警", "alert"}, "api_base": f.URL()})
	before, requests := h.Balance(t, acct.ID), f.Requests()
	_, err := h.Engine.Send(t.Context(), push.AccountPrincipal(acct.ID), push.SendRequest{BotID: bot.ID, Message: push.Message{Content: "disk full"}})
	if push.ReasonOf(err) != "missing_keyword" || !strings.Contains(err.Error(), "告警, alert") {
		t.Fatalf("send without a keyword: %v", err)
	}
	if h.Balance(t, acct.ID) != before || f.Requests() != requests {
		t.Fatal("a send refused for its keyword was charged or sent")
	}
	if j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Type: push.MsgTypeMarkdown, Content: "**告警** disk full"}); j.State != push.StateSucceeded {
		t.Fatalf("markdown with a keyword: %s %s", j.State, j.Error)
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		badToken bool
		prepare  func(f *fake.DingTalk)
		state    push.State
		errHas   []string
		requests int
	}{
		{"unknown token is definitive", true, nil, push.StateFailed, []string{"token is not exist: DingTalk does not know the access token", "(code 300001)"}, 1},
		{"system busy is retried", false, func(f *fake.DingTalk) { f.Fail(fake.DingTalkFault(-1, "系统繁忙")) }, push.StateSucceeded, nil, 2},
		{"410100 throttling is retryable: the window is too short, nothing was sent", false, func(f *fake.DingTalk) {
			f.Fail(fake.DingTalkFault(410100, "send too fast"))
		}, push.StateFailed, []string{"gave up after 1 attempts", "nothing was delivered", "throttled for about 10 minutes"}, 1},
		{"content policy is definitive", false, func(f *fake.DingTalk) { f.Fail(fake.DingTalkFault(430101, "含有不安全的外链")) }, push.StateFailed, []string{"含有不安全的外链 (code 430101)"}, 1},
		{"a gateway's 502 is uncertain", false, func(f *fake.DingTalk) { f.Fail(fake.Fault{Status: 502, Body: "<html>"}) }, push.StateUncertain, []string{"HTTP 502"}, 1},
		{"a dropped connection is uncertain", false, func(f *fake.DingTalk) { f.DropNext(1) }, push.StateUncertain, []string{"no answer"}, 1},
		{"a timeout after writing is uncertain", false, func(f *fake.DingTalk) { f.SetDelay(time.Second) }, push.StateUncertain, []string{"timed out"}, 1},
		{"an unreadable 200 is uncertain", false, func(f *fake.DingTalk) { f.Fail(fake.Fault{Status: 200, Body: "ok"}) }, push.StateUncertain, []string{"could not be read"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewDingTalk(t)
			token, _ := f.NewRobot(fake.DingTalkSecurity{})
			if tt.badToken {
				token = strings.Repeat("0", 64)
			}
			bot := h.PlatformBot(t, acct.ID, "dingtalk", map[string]any{"access_token": token, "api_base": f.URL()})
			if tt.prepare != nil {
				tt.prepare(f)
			}
			h.CheckSend(t, acct.ID, bot.ID, testkit.SendCheck{State: tt.state, ErrHas: tt.errHas, Secrets: []string{token}, Requests: f.Requests, WantRequests: tt.requests})
		})
	}
}

// Without pacing, the 21st message in a minute meets DingTalk's limit and
// fails without being resent (the robot is throttled for ten minutes).
func TestRateLimitWithoutPacing(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewDingTalk(t)
	acct := h.Account(t, "acme")
	token, _ := f.NewRobot(fake.DingTalkSecurity{})
	bot := h.PlatformBot(t, acct.ID, "dingtalk", map[string]any{"access_token": token, "api_base": f.URL()})
	for i := 0; i < 20; i++ {
		if j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: fmt.Sprint("m", i)}); j.State != push.StateSucceeded {
			t.Fatalf("message %d: %s %s", i, j.State, j.Error)
		}
	}
	j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: "one too many"})
	if j.State != push.StateFailed || !strings.Contains(j.Error, "send too fast") || !strings.Contains(j.Error, "(code 130101)") {
		t.Fatalf("21st message: %s %q", j.State, j.Error)
	}
	if len(f.Messages()) != 20 || f.Requests() != 21 {
		t.Fatalf("dingtalk posted %d of %d requests", len(f.Messages()), f.Requests())
	}
}

// The pacer keeps every 60-second window at 19 sends or fewer, under
// DingTalk's 20 a minute, per robot.
func TestPacing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := dingtalk.New(platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }}))
	d := push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"access_token":"aaaaaaaaaaaaaaaaaaaa"}`)}}
	other := push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"access_token":"bbbbbbbbbbbbbbbbbbbb"}`)}}
	var sent []time.Time
	for end := now.Add(5 * time.Minute); now.Before(end); now = now.Add(100 * time.Millisecond) {
		for p.Pace(d) == 0 { // send as much as the pacer allows
			sent = append(sent, now)
		}
	}
	most := 0
	for i := range sent {
		n := 0
		for j := i; j < len(sent) && sent[j].Sub(sent[i]) < time.Minute; j++ {
			n++
		}
		most = max(most, n)
	}
	if most > 19 || most < 18 {
		t.Fatalf("at most %d sends in a minute; want 18 or 19", most)
	}
	if p.Pace(other) != 0 {
		t.Fatal("another robot waits for this one")
	}
}

func TestValidateConfig(t *testing.T) {
	p := dingtalk.New(nil)
	tok := strings.Repeat("a1", 32)
	sec := "SEC" + strings.Repeat("b2", 32)
	tests := []struct {
		cfg    string
		field  string
		secret string
	}{
		{`{"access_token":"` + tok + `"}`, "", ""},
		{`{"access_token":"` + tok + `","secret":"` + sec + `","keywords":["alert"],"api_base":"https://proxy.example.com"}`, "", ""},
		{`{}`, "access_token is missing", ""},
		{`{"access_token":"https://oapi.dingtalk.com/robot/send?access_token=` + tok + `"}`, "access_token is malformed", tok},
		{`{"access_token":"` + tok + `","secret":"SECRET-` + sec + `"}`, "secret is malformed", sec},
		{`{"access_token":"` + tok + `","keywords":[""]}`, "keywords is malformed", ""},
		{`{"access_token":"` + tok + `","keywords":["1","2","3","4","5","6","7","8","9","10","11"]}`, "keywords is malformed", ""},
		{`{"access_token":"` + tok + `","api_base":"oapi.dingtalk.com"}`, "api_base is malformed", ""},
		{`{"token":"` + tok + `"}`, `unknown field "token"`, tok},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, tt.secret)
	}
	if p.Info().Targets {
		t.Error("dingtalk says it has targets")
	}
}
