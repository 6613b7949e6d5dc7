package testkit

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/push/pushtest"
)

// PlatformEnv is a Herald with one account and a loopback image host, for
// the tests of one platform with targets: its bots, targets and sends.
type PlatformEnv struct {
	H        *Herald
	Account  push.Account
	Images   *fake.Images
	platform string
}

// settleTimeout is how long PlatformEnv waits for a job to settle.
const settleTimeout = 20 * time.Second

// NewPlatformEnv starts a Herald (with opts) for tests of platform.
func NewPlatformEnv(t *testing.T, platform string, opts ...Option) *PlatformEnv {
	t.Helper()
	h := New(t, opts...)
	return &PlatformEnv{H: h, Account: h.Account(t, "acme"), Images: fake.NewImages(t), platform: platform}
}

// Bot creates a bot of the platform with the config plus extra fields.
func (e *PlatformEnv) Bot(t *testing.T, cfg json.RawMessage, extra map[string]any) push.Bot {
	t.Helper()
	if len(extra) == 0 {
		return e.H.PlatformBot(t, e.Account.ID, e.platform, []byte(cfg))
	}
	var m map[string]any
	_ = json.Unmarshal(cfg, &m)
	for k, v := range extra {
		m[k] = v
	}
	return e.H.PlatformBot(t, e.Account.ID, e.platform, m)
}

// Target binds a target of the type and address to the bot.
func (e *PlatformEnv) Target(t *testing.T, bot push.Bot, tt push.TargetType, addr string) push.Target {
	t.Helper()
	tg, err := e.H.Engine.Targets().Bind(context.Background(), push.System(), push.Target{BotID: bot.ID, Type: tt, Address: addr})
	if err != nil {
		t.Fatalf("bind %s %q: %v", tt, addr, err)
	}
	return tg
}

// Send sends one message through the bot to the target and returns its
// job once settled.
func (e *PlatformEnv) Send(t *testing.T, bot push.Bot, tg push.Target, m push.Message) push.Job {
	t.Helper()
	res, err := e.H.Engine.Send(context.Background(), push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: bot.ID, TargetID: tg.ID, Message: m})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	j := res.Jobs[0]
	if !j.State.Settled() {
		j = e.Settled(t, j.ID)
	}
	return j
}

// Settled waits until a job is settled (20 s at most) and returns it.
func (e *PlatformEnv) Settled(t *testing.T, id string) push.Job {
	t.Helper()
	return pushtest.Settled(t, e.H.Engine, id, settleTimeout)
}
