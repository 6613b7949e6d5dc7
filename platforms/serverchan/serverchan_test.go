package serverchan_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms/serverchan"
	"github.com/heraldpush/herald/push"
)

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewServerChan(t)
	acct := h.Account(t, "acme")
	turbo := h.PlatformBot(t, acct.ID, "serverchan", map[string]any{"sendkey": f.NewSendKey(), "api_base": f.URL()})
	v3 := h.PlatformBot(t, acct.ID, "serverchan", map[string]any{"sendkey": f.NewSendKey3(4242), "api_base": f.URL()})
	longLine := "Nightly backup of the primary database finished with warnings"
	tests := []struct {
		name string
		bot  push.Bot
		msg  push.Message
		want fake.ServerChanMessage
	}{
		{"text is escaped Markdown", turbo, push.Message{Content: "disk *full*\n# not a heading"},
			fake.ServerChanMessage{Title: "disk *full*", Desp: "disk \\*full\\*  \n\\# not a heading"}},
		{"a long first line is cut to 32 characters", turbo, push.Message{Content: longLine},
			fake.ServerChanMessage{Title: "Nightly backup of the primary d…", Desp: longLine}},
		{"markdown is sent as it is; the title is its text", turbo, push.Message{Type: push.MsgTypeMarkdown, Content: "## **Deployed** v42\n\n- api"},
			fake.ServerChanMessage{Title: "Deployed v42", Desp: "## **Deployed** v42\n\n- api"}},
		{"image", turbo, push.Message{Type: push.MsgTypeImage, Content: "chart", ImageURL: "https://img.example.com/c.png"},
			fake.ServerChanMessage{Title: "chart", Desp: "chart\n\n![chart](https://img.example.com/c.png)"}},
		{"image without caption", turbo, push.Message{Type: push.MsgTypeImage, ImageURL: "https://img.example.com/c.png"},
			fake.ServerChanMessage{Title: "c.png", Desp: "![c.png](https://img.example.com/c.png)"}},
		{"a Server酱³ key goes to its path", v3, push.Message{Content: "hello"},
			fake.ServerChanMessage{V3: true, Title: "hello", Desp: "hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, tt.bot.ID, tt.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			got := testkit.OneNew(t, f.Messages(), before)
			if j.PlatformIndex != got.PushID || got.PushID == "" {
				t.Errorf("platformIndex %q, pushid %q", j.PlatformIndex, got.PushID)
			}
			if utf8.RuneCountInString(got.Title) > serverchan.MaxTitle {
				t.Errorf("title %q is longer than 32 characters", got.Title)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(fake.ServerChanMessage{}, "PushID", "SendKey")); diff != "" {
				t.Errorf("serverchan received (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		badKey   bool
		prepare  func(f *fake.ServerChan)
		state    push.State
		errHas   string
		requests int
	}{
		{"a bad key is definitive", true, nil, push.StateFailed, "serverchan: bad pushtoken (code 40001)", 1},
		{"the daily quota is definitive", false, func(f *fake.ServerChan) {
			f.Fail(fake.ServerChanFault(40001, "超过当天的发送次数限制[5]，请稍后再试"))
		}, push.StateFailed, "超过当天的发送次数限制", 1},
		{"a proxy's 429 is retried", false, func(f *fake.ServerChan) { f.Fail(fake.Fault{Status: 429, Body: "busy"}) }, push.StateSucceeded, "", 2},
		{"a gateway's 502 is uncertain", false, func(f *fake.ServerChan) { f.Fail(fake.Fault{Status: 502, Body: "bad gateway"}) }, push.StateUncertain, "HTTP 502", 1},
		{"a dropped connection is uncertain", false, func(f *fake.ServerChan) { f.DropNext(1) }, push.StateUncertain, "no answer", 1},
		{"a timeout after writing is uncertain", false, func(f *fake.ServerChan) { f.SetDelay(time.Second) }, push.StateUncertain, "timed out", 1},
		{"a 200 without a pushid is uncertain", false, func(f *fake.ServerChan) { f.Fail(fake.Fault{Status: 200, Body: `{"code":0,"message":""}`}) }, push.StateUncertain, "no pushid", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewServerChan(t)
			key := f.NewSendKey()
			if tt.badKey {
				key = "SCT1T" + strings.Repeat("x", 30)
			}
			bot := h.PlatformBot(t, acct.ID, "serverchan", map[string]any{"sendkey": key, "api_base": f.URL()})
			if tt.prepare != nil {
				tt.prepare(f)
			}
			h.CheckSend(t, acct.ID, bot.ID, testkit.SendCheck{State: tt.state, ErrHas: []string{tt.errHas}, Secrets: []string{key}, Requests: f.Requests, WantRequests: tt.requests})
		})
	}
}

func TestValidateConfig(t *testing.T) {
	p := serverchan.New(nil)
	tests := []struct {
		cfg    string
		field  string
		secret string
	}{
		{`{"sendkey":"SCT123456TAbCdEfGh"}`, "", ""},
		{`{"sendkey":"sctp42tAbCdEfGh","api_base":"https://proxy.example.com"}`, "", ""},
		{`{}`, "sendkey is missing", ""},
		{`{"sendkey":"SCT123 secret-key"}`, "sendkey is malformed", "SCT123 secret-key"},
		{`{"sendkey":"SCT123456TAbCdEfGh","api_base":"nope"}`, "api_base is malformed", ""},
		{`{"send_key":"SCTsecret123"}`, `unknown field "send_key"`, "SCTsecret123"},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, tt.secret)
	}
	if p.Info().Targets {
		t.Error("serverchan says it has targets")
	}
}
