package feishu_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/feishu"
	"github.com/heraldpush/herald/push"
)

// TestVerify checks credentials with a fresh tenant access token request
// on the fake: good ones verify (each time with a request of its own, not
// a cached token), a wrong app secret is a Definitive refusal with
// Feishu's code that does not quote the secret, and a token endpoint that
// cannot answer is not a refusal.
func TestVerify(t *testing.T) {
	wrong := strings.Repeat("s", 32)
	cases := []struct {
		name  string
		setup func(f *fake.Feishu) (config json.RawMessage, secret string)
		want  *push.Outcome
		says  []string
	}{
		{"good credentials", func(f *fake.Feishu) (json.RawMessage, string) {
			a := f.NewApp()
			return a.Config(f), a.AppSecret
		}, nil, nil},
		{"wrong app secret", func(f *fake.Feishu) (json.RawMessage, string) {
			a := f.NewApp()
			a.AppSecret = wrong
			return a.Config(f), wrong
		}, ptr(push.OutcomeDefinitive), []string{"app secret invalid", "10014", "check app_id, app_secret"}},
		{"token endpoint 502", func(f *fake.Feishu) (json.RawMessage, string) {
			a := f.NewApp()
			f.Fail(fake.FeishuOpToken, fake.FeishuFault{Status: 502, Body: "<html>Bad Gateway</html>"})
			return a.Config(f), a.AppSecret
		}, ptr(push.OutcomeRetryable), nil},
		{"token endpoint down", func(f *fake.Feishu) (json.RawMessage, string) {
			a := f.NewApp()
			f.Close()
			return a.Config(f), a.AppSecret
		}, ptr(push.OutcomeRetryable), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fake.NewFeishu(t)
			cfg, secret := c.setup(f)
			p := feishu.New(nil, feishu.Options{})
			checkVerify(t, p.Verify(ctx, cfg), c.want, c.says, secret)
			if c.want == nil {
				checkVerify(t, p.Verify(ctx, cfg), c.want, c.says, secret)
				if n := f.Requests(fake.FeishuOpToken); n != 2 {
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
