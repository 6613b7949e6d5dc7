package wechat_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/wechat"
	"github.com/heraldpush/herald/push"
)

const (
	appID  = "wx0123456789abcdef"
	secret = "0123456789abcdef0123456789abcdef"
	// cbToken and aesKey are a server configuration's Token and
	// EncodingAESKey.
	cbToken = "CallbackT0kenSecret"
	aesKey  = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
)

func TestValidateConfig(t *testing.T) {
	p := wechat.New(nil)
	tests := []struct {
		name   string
		config string
		field  string // "" for a valid config
	}{
		{"valid", `{"app_id":"` + appID + `","app_secret":"` + secret + `"}`, ""},
		{"valid classic with hosts", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token_api":"classic","api_base":"https://proxy.example.com","token_base":"http://10.1.2.3"}`, ""},
		{"missing app_id", `{"app_secret":"` + secret + `"}`, "app_id is missing"},
		{"malformed app_id", `{"app_id":"0123456789abcdef","app_secret":"` + secret + `"}`, "app_id is malformed"},
		{"missing app_secret", `{"app_id":"` + appID + `"}`, "app_secret is missing"},
		{"short app_secret", `{"app_id":"` + appID + `","app_secret":"` + secret[:31] + `"}`, "app_secret is malformed"},
		{"numeric app_secret", `{"app_id":"` + appID + `","app_secret":12345}`, "field app_secret must be a string"},
		{"unknown token_api", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token_api":"fast"}`, "token_api is malformed"},
		{"api_base with a query", `{"app_id":"` + appID + `","app_secret":"` + secret + `","api_base":"https://x.example/?secret=` + secret + `"}`, "api_base is malformed"},
		{"bad token_base", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token_base":"x"}`, "token_base is malformed"},
		{"unknown field", `{"app_id":"` + appID + `","secret":"` + secret + `"}`, `unknown field "secret"`},
		{"valid plaintext callback", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token":"` + cbToken + `"}`, ""},
		{"valid safe callback", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token":"` + cbToken + `","encoding_aes_key":"` + aesKey + `"}`, ""},
		{"short token", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token":"ab"}`, "token is malformed"},
		{"token with symbols", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token":"` + cbToken + `!"}`, "token is malformed"},
		{"key without token", `{"app_id":"` + appID + `","app_secret":"` + secret + `","encoding_aes_key":"` + aesKey + `"}`, "token is missing"},
		{"short key", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token":"` + cbToken + `","encoding_aes_key":"` + aesKey[:42] + `"}`, "encoding_aes_key is malformed"},
		{"key with symbols", `{"app_id":"` + appID + `","app_secret":"` + secret + `","token":"` + cbToken + `","encoding_aes_key":"` + aesKey[:42] + `+"}`, "encoding_aes_key is malformed"},
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
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:31]) ||
				strings.Contains(err.Error(), cbToken) || strings.Contains(err.Error(), aesKey[:42]) {
				t.Fatalf("error %q quotes the secret", err)
			}
		})
	}
}

func TestValidateTarget(t *testing.T) {
	p := wechat.New(nil)
	if got := p.Info().TargetTypes; !cmp.Equal(got, []push.TargetType{push.TargetUser}) {
		t.Fatalf("target types %v, want users only", got)
	}
	tests := []struct {
		tt   push.TargetType
		addr string
		ok   bool
	}{
		{push.TargetUser, "oLVPpjqs9BhvzwPj5A-vTYAX3GLc", true},
		{push.TargetUser, "o_short", true},
		{push.TargetUser, "has space in it", false},
		{push.TargetUser, "abc", false},
		{push.TargetGroup, "oLVPpjqs9BhvzwPj5A-vTYAX3GLc", false},
	}
	for _, tc := range tests {
		err := p.ValidateTarget(nil, push.Target{Type: tc.tt, Address: tc.addr})
		if (err == nil) != tc.ok {
			t.Errorf("ValidateTarget(%s %q) = %v, want ok=%v", tc.tt, tc.addr, err, tc.ok)
		}
	}
}

func TestRenderMarkdown(t *testing.T) {
	tests := []struct{ md, want string }{
		{"**bold** and `code`", "bold and code"},
		{"[docs](https://example.com/a?b=1&c=2)", `<a href="https://example.com/a?b=1&c=2">docs</a>`},
		{"<https://example.com>", "https://example.com"},
		{"![chart](https://example.com/c.png)", `<a href="https://example.com/c.png">chart</a>`},
		{"## Title\n1. one\n2. two", "Title\n\n1. one\n2. two"},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, wechat.RenderMarkdown(tc.md)); diff != "" {
			t.Errorf("RenderMarkdown(%q) (-want +got):\n%s", tc.md, diff)
		}
	}
}

// TestSendOutcomes checks the outcome and wait the provider reports for
// quota answers, which the engine uses to retry or give up.
func TestSendOutcomes(t *testing.T) {
	f := fake.NewWeChat(t)
	id, sec := f.NewApp()
	f.AddFollower(id, "oFollower0001")
	p := wechat.New(nil)
	d := push.Delivery{JobID: "j", Bot: push.Bot{Platform: "wechat", Config: f.BotConfig(id, sec)},
		Target: push.Target{Type: push.TargetUser, Address: "oFollower0001"}, AsType: push.TargetUser, Message: push.Message{Type: push.MsgTypeText, Content: "x"}}
	tests := []struct {
		name    string
		fault   fake.WeChatFault
		outcome push.Outcome
		lo, hi  time.Duration // bounds of the reported wait
	}{
		{"minute quota: wait for the next minute", fake.WeChatFault{ErrCode: 45011, ErrMsg: "api minute-quota reach limit"}, push.OutcomeRetryable, time.Nanosecond, time.Minute},
		{"daily quota: wait for midnight in China", fake.WeChatFault{ErrCode: 45009, ErrMsg: "reach max api daily quota limit"}, push.OutcomeRetryable, time.Nanosecond, 24 * time.Hour},
		{"busy", fake.WeChatFault{ErrCode: -1, ErrMsg: "system error"}, push.OutcomeRetryable, time.Second, time.Second},
		{"invalid openid", fake.WeChatFault{ErrCode: 40003, ErrMsg: "invalid openid"}, push.OutcomeDefinitive, 0, 0},
		{"unknown code on a 5xx", fake.WeChatFault{Status: 503, ErrCode: 99999, ErrMsg: "?"}, push.OutcomeUncertain, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.Fail(tc.fault)
			_, err := p.Send(ctx, d)
			se := push.AsSendError(err)
			if err == nil || se.Outcome != tc.outcome {
				t.Fatalf("error %v (%s), want %s", err, se.Outcome, tc.outcome)
			}
			if se.RetryAfter < tc.lo || se.RetryAfter > tc.hi {
				t.Fatalf("retry after %s, want within [%s, %s]", se.RetryAfter, tc.lo, tc.hi)
			}
		})
	}
}
