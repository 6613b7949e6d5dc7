package pushplus_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms/pushplus"
	"github.com/heraldpush/herald/push"
)

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewPushPlus(t)
	acct := h.Account(t, "acme")
	token := f.NewToken()
	bot := h.PlatformBot(t, acct.ID, "pushplus", map[string]any{"token": token, "api_base": f.URL()})
	group := h.PlatformBot(t, acct.ID, "pushplus", map[string]any{"token": token, "topic": "ops-team", "api_base": f.URL()})
	tests := []struct {
		name string
		bot  push.Bot
		msg  push.Message
		want fake.PushPlusMessage
	}{
		{"text uses the txt template", bot, push.Message{Content: "disk <b>full</b>\nsecond line"},
			fake.PushPlusMessage{Title: "disk <b>full</b>", Content: "disk <b>full</b>\nsecond line", Template: "txt"}},
		{"markdown uses the markdown template", bot, push.Message{Type: push.MsgTypeMarkdown, Content: "# Deployed\n\n**v42**"},
			fake.PushPlusMessage{Title: "Deployed", Content: "# Deployed\n\n**v42**", Template: "markdown"}},
		{"image is a Markdown image", bot, push.Message{Type: push.MsgTypeImage, Content: "chart", ImageURL: "https://img.example.com/c.png"},
			fake.PushPlusMessage{Title: "chart", Content: "chart\n\n![chart](https://img.example.com/c.png)", Template: "markdown"}},
		{"a topic sends to the group", group, push.Message{Content: "hello team"},
			fake.PushPlusMessage{Title: "hello team", Content: "hello team", Template: "txt", Topic: "ops-team"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, tt.bot.ID, tt.msg)
			// Accepted for asynchronous delivery: succeeded, with the 流水号.
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			got := testkit.OneNew(t, f.Messages(), before)
			if j.PlatformIndex != got.Serial || len(got.Serial) != 32 {
				t.Errorf("platformIndex %q, 流水号 %q", j.PlatformIndex, got.Serial)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(fake.PushPlusMessage{}, "Serial", "Token")); diff != "" {
				t.Errorf("pushplus received (-want +got):\n%s", diff)
			}
		})
	}
}

// The fake, like PushPlus, ignores a body sent without the JSON content
// type: the provider must send it.
func TestFakeNeedsJSONContentType(t *testing.T) {
	f := fake.NewPushPlus(t)
	body, _ := json.Marshal(map[string]string{"token": f.NewToken(), "content": "x"})
	resp, err := http.Post(f.URL()+"/send", "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"code":903`) {
		t.Fatalf("a text/plain body was read: %s", b)
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		badToken bool
		prepare  func(f *fake.PushPlus)
		state    push.State
		errHas   string
		requests int
	}{
		{"903 invalid token is definitive", true, nil, push.StateFailed, "pushplus: 无效的用户令牌: the token was refused: check token in the bot config (code 903)", 1},
		{"900 restricted is definitive", false, func(f *fake.PushPlus) { f.Fail(fake.PushPlusFault(900, "用户账号使用受限")) }, push.StateFailed, "用户账号使用受限: the account is restricted after too many requests", 1},
		{"888 points is definitive", false, func(f *fake.PushPlus) { f.Fail(fake.PushPlusFault(888, "积分不足,需要充值")) }, push.StateFailed, "(code 888)", 1},
		{"905 verification is definitive", false, func(f *fake.PushPlus) { f.Fail(fake.PushPlusFault(905, "账户未进行实名认证")) }, push.StateFailed, "real-name verification (code 905)", 1},
		{"999 validation is definitive", false, func(f *fake.PushPlus) { f.Fail(fake.PushPlusFault(999, "内容不能为空")) }, push.StateFailed, "内容不能为空 (code 999)", 1},
		{"500 system error is retried", false, func(f *fake.PushPlus) { f.Fail(fake.PushPlusFault(500, "系统异常,请稍后再试")) }, push.StateSucceeded, "", 2},
		{"a gateway's 502 is uncertain", false, func(f *fake.PushPlus) { f.Fail(fake.Fault{Status: 502, Body: "<html>502</html>"}) }, push.StateUncertain, "HTTP 502", 1},
		{"a dropped connection is uncertain", false, func(f *fake.PushPlus) { f.DropNext(1) }, push.StateUncertain, "no answer", 1},
		{"a timeout after writing is uncertain", false, func(f *fake.PushPlus) { f.SetDelay(time.Second) }, push.StateUncertain, "timed out", 1},
		{"a 200 without a 流水号 is uncertain", false, func(f *fake.PushPlus) { f.Fail(fake.PushPlusFault(200, "请求成功")) }, push.StateUncertain, "no 流水号", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewPushPlus(t)
			token := f.NewToken()
			if tt.badToken {
				token = strings.Repeat("ab", 16)
			}
			bot := h.PlatformBot(t, acct.ID, "pushplus", map[string]any{"token": token, "api_base": f.URL()})
			if tt.prepare != nil {
				tt.prepare(f)
			}
			h.CheckSend(t, acct.ID, bot.ID, testkit.SendCheck{State: tt.state, ErrHas: []string{tt.errHas}, Secrets: []string{token}, Requests: f.Requests, WantRequests: tt.requests})
		})
	}
}

func TestValidateConfig(t *testing.T) {
	p := pushplus.New(nil)
	tests := []struct {
		cfg    string
		field  string
		secret string
	}{
		{`{"token":"be8652e98bd04139a13e1bffcd6d0f71"}`, "", ""},
		{`{"token":"be8652e98bd04139a13e1bffcd6d0f71","topic":"ops","api_base":"https://proxy.example.com"}`, "", ""},
		{`{}`, "token is missing", ""},
		{`{"token":"be8652e9 secret 8bd04139"}`, "token is malformed", "be8652e9 secret 8bd04139"},
		{`{"token":"be8652e98bd04139a13e1bffcd6d0f71","topic":"a b"}`, "topic is malformed", ""},
		{`{"token":"be8652e98bd04139a13e1bffcd6d0f71","api_base":"www.pushplus.plus"}`, "api_base is malformed", ""},
		{`{"tokn":"secretsecretsecret"}`, `unknown field "tokn"`, "secretsecretsecret"},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, tt.secret)
	}
	if p.Info().Targets {
		t.Error("pushplus says it has targets")
	}
}
