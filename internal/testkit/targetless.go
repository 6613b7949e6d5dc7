package testkit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/push/pushtest"
)

// PlatformBot creates a bot of the account on any platform; config is
// marshalled as JSON unless it is a string or []byte.
func (h *Herald) PlatformBot(tb testing.TB, accountID int64, platform string, config any) push.Bot {
	tb.Helper()
	var raw []byte
	switch c := config.(type) {
	case string:
		raw = []byte(c)
	case []byte:
		raw = c
	default:
		var err error
		if raw, err = json.Marshal(c); err != nil {
			tb.Fatalf("testkit: marshal %s config: %v", platform, err)
		}
	}
	b, err := h.Engine.Bots().Create(context.Background(), push.System(), push.Bot{AccountID: accountID, Platform: platform, Name: platform, Config: raw})
	if err != nil {
		tb.Fatalf("testkit: create %s bot: %v", platform, err)
	}
	return b
}

// SendNoTarget sends m through a bot of a platform without targets (no
// target named) and returns the job as the send left it; a refused send
// fails the test.
func (h *Herald) SendNoTarget(tb testing.TB, accountID, botID int64, m push.Message) push.Job {
	tb.Helper()
	res, err := h.Engine.Send(context.Background(), push.AccountPrincipal(accountID), push.SendRequest{BotID: botID, Message: m})
	if err != nil {
		tb.Fatalf("testkit: send through bot %d: %v", botID, err)
	}
	return res.Jobs[0]
}

// Settled waits until a job is neither queued nor running and returns it.
func (h *Herald) Settled(tb testing.TB, id string, timeout time.Duration) push.Job {
	tb.Helper()
	return pushtest.Settled(tb, h.Engine, id, timeout)
}

// SendCheck is what a send of "hello" through a bot of a platform without
// targets must come to.
type SendCheck struct {
	State  push.State
	ErrHas []string // texts the job's error contains
	// Secrets are texts the job's error must not show (credentials).
	Secrets []string
	// Requests counts the requests the fake platform got; it must be
	// WantRequests once a wrong resend would have arrived.
	Requests     func() int
	WantRequests int
}

// CheckSend sends "hello" through the bot, waits (5 s at most) for the
// job to settle and checks it against c.
func (h *Herald) CheckSend(t *testing.T, accountID, botID int64, c SendCheck) push.Job {
	t.Helper()
	res, err := h.Engine.Send(context.Background(), push.AccountPrincipal(accountID), push.SendRequest{BotID: botID, Message: push.Message{Content: "hello"}})
	if err != nil {
		t.Fatalf("send through bot %d: %v", botID, err)
	}
	j := pushtest.Settled(t, h.Engine, res.Jobs[0].ID, 5*time.Second)
	if j.State != c.State {
		t.Fatalf("job %s %q, want %s", j.State, j.Error, c.State)
	}
	for _, s := range c.ErrHas {
		if !strings.Contains(j.Error, s) {
			t.Errorf("the job's error %q lacks %q", j.Error, s)
		}
	}
	for _, s := range c.Secrets {
		if s != "" && strings.Contains(j.Error, s) {
			t.Errorf("the job's error %q shows the secret %q", j.Error, s)
		}
	}
	time.Sleep(50 * time.Millisecond) // a wrong resend would arrive now
	if got := c.Requests(); got != c.WantRequests {
		t.Errorf("the platform got %d requests, want %d", got, c.WantRequests)
	}
	return j
}

// CheckConfig gives cfg to the platform's ValidateConfig: with field ""
// it must pass, otherwise fail as invalid_config naming field; the error
// must not show secret (when not "").
func CheckConfig(t *testing.T, p push.Platform, cfg, field, secret string) {
	t.Helper()
	err := p.ValidateConfig(json.RawMessage(cfg))
	switch {
	case field == "" && err != nil:
		t.Errorf("%s: %v", cfg, err)
	case field != "" && (err == nil || !strings.Contains(err.Error(), field) || push.ReasonOf(err) != "invalid_config"):
		t.Errorf("%s: %v; want invalid_config naming %q", cfg, err, field)
	case secret != "" && err != nil && strings.Contains(err.Error(), secret):
		t.Errorf("%s: error %q shows the secret", cfg, err)
	}
}

// OneNew returns the one item a fake platform received since it held
// before items, failing the test unless exactly one arrived.
func OneNew[T any](tb testing.TB, items []T, before int) T {
	tb.Helper()
	if len(items) != before+1 {
		tb.Fatalf("the platform received %d new items, want 1", len(items)-before)
	}
	return items[before]
}
