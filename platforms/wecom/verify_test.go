package wecom_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/wecom"
	"github.com/heraldpush/herald/push"
)

// TestVerify checks an application's credentials with a fresh gettoken
// on the fake: good ones verify (each time with a request of its own, not
// a cached token), a wrong secret is a Definitive refusal with WeCom's
// errcode that does not quote the secret, and a token endpoint that
// cannot answer is not a refusal. A group robot cannot be verified
// without posting: ErrCannotVerify, and nothing is requested.
func TestVerify(t *testing.T) {
	wrong := strings.Repeat("s", 43)
	cases := []struct {
		name  string
		setup func(f *fake.WeCom) (config json.RawMessage, secret string)
		want  *push.Outcome
		says  []string
	}{
		{"good credentials", func(f *fake.WeCom) (json.RawMessage, string) {
			a := f.NewApp()
			return a.Config(f), a.Secret
		}, nil, nil},
		{"wrong secret", func(f *fake.WeCom) (json.RawMessage, string) {
			a := f.NewApp()
			a.Secret = wrong
			return a.Config(f), wrong
		}, ptr(push.OutcomeDefinitive), []string{"40001", "check"}},
		{"token endpoint 502", func(f *fake.WeCom) (json.RawMessage, string) {
			a := f.NewApp()
			f.Fail(fake.WeComOpToken, fake.WeComFault{Status: 502, Body: "<html>Bad Gateway</html>"})
			return a.Config(f), a.Secret
		}, ptr(push.OutcomeRetryable), nil},
		{"token endpoint down", func(f *fake.WeCom) (json.RawMessage, string) {
			a := f.NewApp()
			f.Close()
			return a.Config(f), a.Secret
		}, ptr(push.OutcomeRetryable), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fake.NewWeCom(t)
			cfg, secret := c.setup(f)
			p := wecom.New(nil, wecom.Options{})
			checkVerify(t, p.Verify(ctx, cfg), c.want, c.says, secret)
			if c.want == nil {
				checkVerify(t, p.Verify(ctx, cfg), c.want, c.says, secret)
				if n := f.Requests(fake.WeComOpToken); n != 2 {
					t.Errorf("two verifications made %d token requests, want 2 (none from a cache)", n)
				}
			}
		})
	}
	t.Run("robot", func(t *testing.T) {
		f := fake.NewWeCom(t)
		cfg, _ := json.Marshal(map[string]string{"mode": wecom.ModeRobot, "webhook_key": f.NewRobot(), "api_base": f.URL()})
		if err := wecom.New(nil, wecom.Options{}).Verify(ctx, cfg); !errors.Is(err, push.ErrCannotVerify) {
			t.Fatalf("Verify of a robot: %v, want ErrCannotVerify", err)
		}
		if n := f.Requests(fake.WeComOpToken) + f.Requests(fake.WeComOpSend); n != 0 {
			t.Errorf("verifying a robot made %d requests", n)
		}
	})
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
