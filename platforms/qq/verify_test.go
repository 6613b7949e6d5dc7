package qq_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/qq"
	"github.com/heraldpush/herald/push"
)

// TestVerify checks credentials with a fresh getAppAccessToken on the
// fake: good ones verify (each time with a request of its own, not a
// cached token), a wrong secret is a Definitive refusal with QQ's code
// that does not quote the secret, and a token endpoint that cannot answer
// is not a refusal.
func TestVerify(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *fake.QQ) (config json.RawMessage, secret string)
		want  *push.Outcome
		says  []string
	}{
		{"good credentials", func(f *fake.QQ) (json.RawMessage, string) {
			id, secret := f.NewApp()
			return f.BotConfig(id, secret), secret
		}, nil, nil},
		{"wrong secret", func(f *fake.QQ) (json.RawMessage, string) {
			id, _ := f.NewApp()
			wrong := strings.Repeat("s", 32)
			return f.BotConfig(id, wrong), wrong
		}, ptr(push.OutcomeDefinitive), []string{"refused the bot's credentials", "100016", "client_secret"}},
		{"token endpoint 502", func(f *fake.QQ) (json.RawMessage, string) {
			id, secret := f.NewApp()
			f.Fail(fake.QQFault{On: "token", Status: 502, HTML: true})
			return f.BotConfig(id, secret), secret
		}, ptr(push.OutcomeRetryable), nil},
		{"token endpoint down", func(f *fake.QQ) (json.RawMessage, string) {
			id, secret := f.NewApp()
			f.Close()
			return f.BotConfig(id, secret), secret
		}, ptr(push.OutcomeRetryable), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fake.NewQQ(t)
			cfg, secret := c.setup(f)
			p := qq.New(nil)
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
