package wechat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/wechat"
	"github.com/heraldpush/herald/push"
)

// TestVerify checks credentials with a fresh token request on the fake
// (the stable endpoint, or a token service's configured one): good ones verify (each time with a
// request of its own, not a cached token), a wrong secret is a Definitive
// refusal with WeChat's errcode that does not quote the secret, and a
// token endpoint that cannot answer is not a refusal.
func TestVerify(t *testing.T) {
	config := func(f *fake.WeChat, id, secret, api string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"app_id": id, "app_secret": secret, "api_base": f.URL(), "token_api": api})
		return b
	}
	// proxied is a config whose tokens come from a token service of its
	// own (here the fake too), asked on its configured endpoint.
	proxied := func(f *fake.WeChat, id, secret, api string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"app_id": id, "app_secret": secret, "api_base": f.URL(), "token_base": f.URL(), "token_api": api})
		return b
	}
	wrong := strings.Repeat("a", 32)
	cases := []struct {
		name  string
		setup func(f *fake.WeChat) (config json.RawMessage, secret string)
		want  *push.Outcome
		says  []string
	}{
		{"good credentials, stable token", func(f *fake.WeChat) (json.RawMessage, string) {
			id, secret := f.NewApp()
			return config(f, id, secret, wechat.TokenStable), secret
		}, nil, nil},
		{"good credentials, classic token", func(f *fake.WeChat) (json.RawMessage, string) {
			id, secret := f.NewApp()
			return config(f, id, secret, wechat.TokenClassic), secret
		}, nil, nil},
		{"wrong secret, stable token", func(f *fake.WeChat) (json.RawMessage, string) {
			id, _ := f.NewApp()
			return config(f, id, wrong, wechat.TokenStable), wrong
		}, ptr(push.OutcomeDefinitive), []string{"refused the account's credentials", "40125"}},
		// The classic endpoint would replace the account's token: the
		// stable one is asked (its errcode for a wrong secret is 40125).
		{"wrong secret, classic token", func(f *fake.WeChat) (json.RawMessage, string) {
			id, _ := f.NewApp()
			return config(f, id, wrong, wechat.TokenClassic), wrong
		}, ptr(push.OutcomeDefinitive), []string{"refused the account's credentials", "40125"}},
		{"wrong secret, classic token service", func(f *fake.WeChat) (json.RawMessage, string) {
			id, _ := f.NewApp()
			return proxied(f, id, wrong, wechat.TokenClassic), wrong
		}, ptr(push.OutcomeDefinitive), []string{"refused the account's credentials", "40001"}},
		{"good credentials, classic token service", func(f *fake.WeChat) (json.RawMessage, string) {
			id, secret := f.NewApp()
			return proxied(f, id, secret, wechat.TokenClassic), secret
		}, nil, nil},
		{"token endpoint 502", func(f *fake.WeChat) (json.RawMessage, string) {
			id, secret := f.NewApp()
			f.Fail(fake.WeChatFault{On: "token", Status: 502, Body: "<html>Bad Gateway</html>"})
			return f.BotConfig(id, secret), secret
		}, ptr(push.OutcomeRetryable), nil},
		{"token endpoint down", func(f *fake.WeChat) (json.RawMessage, string) {
			id, secret := f.NewApp()
			f.Close()
			return f.BotConfig(id, secret), secret
		}, ptr(push.OutcomeRetryable), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fake.NewWeChat(t)
			cfg, secret := c.setup(f)
			p := wechat.New(nil)
			checkVerify(t, p.Verify(ctx, cfg), c.want, c.says, secret)
			if c.want == nil {
				checkVerify(t, p.Verify(ctx, cfg), c.want, c.says, secret)
				if n := f.Requests("token"); n != 2 {
					t.Errorf("two verifications made %d token requests, want 2 (none from a cache)", n)
				}
			}
		})
	}
}

// checkVerify checks a Verify error: nil when want is nil, else of that
// outcome, saying each of says and never the secret.
func checkVerify(t *testing.T, err error, want *push.Outcome, says []string, secret string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("Verify succeeded")
	}
	if se := push.AsSendError(err); se.Outcome != *want {
		t.Errorf("outcome %s, want %s (%v)", se.Outcome, *want, err)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error %q quotes the secret", err)
	}
}

func ptr[T any](v T) *T { return &v }
