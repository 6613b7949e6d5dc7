package ntfy_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/ntfy"
	"github.com/heraldpush/herald/push"
)

// TestVerify checks credentials with GET /v1/account on the fake: a known
// token or user verifies and publishes nothing; a wrong one is a
// Definitive refusal with ntfy's code that does not quote it; a server
// that cannot answer is not a refusal; a bot without credentials, or a
// server without access control, cannot be verified.
func TestVerify(t *testing.T) {
	wrong := "tk_" + strings.Repeat("w", 29)
	cases := []struct {
		name   string
		setup  func(f *fake.Ntfy) (config ntfy.Config, secret string)
		want   *push.Outcome
		cannot bool
		says   []string
	}{
		{"good token", func(f *fake.Ntfy) (ntfy.Config, string) {
			tok := f.AddUser("ada", "pw-ada-secret", "alerts")
			return ntfy.Config{Token: tok}, tok
		}, nil, false, nil},
		{"good user and password", func(f *fake.Ntfy) (ntfy.Config, string) {
			f.AddUser("ada", "pw-ada-secret", "alerts")
			return ntfy.Config{User: "ada", Password: "pw-ada-secret"}, "pw-ada-secret"
		}, nil, false, nil},
		{"wrong token", func(*fake.Ntfy) (ntfy.Config, string) { return ntfy.Config{Token: wrong}, wrong },
			ptr(push.OutcomeDefinitive), false, []string{"ntfy refused the access token", "40101"}},
		{"wrong password", func(f *fake.Ntfy) (ntfy.Config, string) {
			f.AddUser("ada", "pw-ada-secret", "alerts")
			return ntfy.Config{User: "ada", Password: "pw-wrong-secret"}, "pw-wrong-secret"
		}, ptr(push.OutcomeDefinitive), false, []string{"ntfy refused the user and password", "40101"}},
		{"server 502", func(f *fake.Ntfy) (ntfy.Config, string) {
			tok := f.AddUser("ada", "pw-ada-secret", "alerts")
			f.Fail(fake.Fault{Status: 502, Body: "<html>Bad Gateway</html>"})
			return ntfy.Config{Token: tok}, tok
		}, ptr(push.OutcomeRetryable), false, nil},
		// After too many failed authentications ntfy answers 429 to any
		// credentials, right or wrong: that refuses nothing.
		{"too many failed authentications", func(f *fake.Ntfy) (ntfy.Config, string) {
			tok := f.AddUser("ada", "pw-ada-secret", "alerts")
			f.SetAuthFailureLimit(0)
			return ntfy.Config{Token: tok}, tok
		}, ptr(push.OutcomeRetryable), false, []string{"HTTP 429", "42909"}},
		{"server down", func(f *fake.Ntfy) (ntfy.Config, string) {
			tok := f.AddUser("ada", "pw-ada-secret", "alerts")
			f.Close()
			return ntfy.Config{Token: tok}, tok
		}, ptr(push.OutcomeRetryable), false, nil},
		{"no credentials", func(*fake.Ntfy) (ntfy.Config, string) { return ntfy.Config{}, "" }, nil, true, nil},
		{"server without access control", func(f *fake.Ntfy) (ntfy.Config, string) {
			f.DisableAuth()
			return ntfy.Config{Token: wrong}, wrong
		}, nil, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fake.NewNtfy(t)
			cfg, secret := c.setup(f)
			cfg.Server, cfg.Topic = f.URL(), "alerts"
			raw, _ := json.Marshal(cfg)
			err := ntfy.New(nil).Verify(ctx, raw)
			if len(f.Messages()) != 0 {
				t.Error("verifying published a message")
			}
			switch {
			case c.cannot:
				if !errors.Is(err, push.ErrCannotVerify) {
					t.Fatalf("Verify: %v, want ErrCannotVerify", err)
				}
			case c.want == nil:
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
			default:
				if err == nil {
					t.Fatal("Verify succeeded")
				}
				if se := push.AsSendError(err); se.Outcome != *c.want {
					t.Errorf("outcome %s, want %s (%v)", se.Outcome, *c.want, err)
				}
				for _, s := range c.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q quotes the credentials", err)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
