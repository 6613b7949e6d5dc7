package telegram_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/telegram"
	"github.com/heraldpush/herald/push"
)

// TestVerify checks credentials with getMe on the fake Bot API: a known
// token verifies, an unknown one is a Definitive refusal that does not
// quote the token, and a Bot API that cannot answer is not a refusal.
func TestVerify(t *testing.T) {
	wrong := "7000000999:" + strings.Repeat("x", 35)
	cases := []struct {
		name  string
		setup func(f *fake.Telegram) string // returns the token to verify
		want  *push.Outcome
		says  string
	}{
		{"good token", func(f *fake.Telegram) string { return f.NewBot() }, nil, ""},
		{"wrong token", func(*fake.Telegram) string { return wrong }, ptr(push.OutcomeDefinitive), "Telegram refused the bot token"},
		{"bot api down", func(f *fake.Telegram) string { tok := f.NewBot(); f.Close(); return tok }, ptr(push.OutcomeRetryable), ""},
		{"bot api 502", func(f *fake.Telegram) string {
			tok := f.NewBot()
			f.Fail(fake.TelegramFault{Status: 502, Description: "Bad Gateway"})
			return tok
		}, ptr(push.OutcomeUncertain), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fake.NewTelegram(t)
			tok := c.setup(f)
			cfg, _ := json.Marshal(telegram.Config{Token: tok, APIBase: f.URL()})
			err := telegram.New(nil, telegram.Options{}).Verify(ctx, cfg)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Verify succeeded")
			}
			se := push.AsSendError(err)
			if se.Outcome != *c.want {
				t.Errorf("outcome %s, want %s (%v)", se.Outcome, *c.want, err)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %q does not say %q", err, c.says)
			}
			if _, secret, _ := strings.Cut(tok, ":"); strings.Contains(err.Error(), secret) {
				t.Errorf("error %q quotes the token", err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
