package wecom_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/heraldpush/herald/internal/fake"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

// env is a Herald with a fake WeCom and an image host.
type env struct {
	h    *testkit.Herald
	wc   *fake.WeCom
	img  *fake.Images
	acct push.Account
}

func newEnv(t *testing.T, opts ...testkit.Option) *env {
	t.Helper()
	h := testkit.New(t, opts...)
	return &env{h: h, wc: fake.NewWeCom(t), img: fake.NewImages(t), acct: h.Account("acme")}
}

// bot creates a WeCom bot with the config, plus extra fields.
func (e *env) bot(t *testing.T, cfg json.RawMessage, extra map[string]any) push.Bot {
	t.Helper()
	if len(extra) > 0 {
		var m map[string]any
		_ = json.Unmarshal(cfg, &m)
		for k, v := range extra {
			m[k] = v
		}
		cfg, _ = json.Marshal(m)
	}
	b, err := e.h.Engine.CreateBot(ctx, push.Bot{AccountID: e.acct.ID, Platform: "wecom", Name: "wc", Config: cfg})
	if err != nil {
		t.Fatalf("create bot: %v", err)
	}
	return b
}

func (e *env) target(t *testing.T, bot push.Bot, tt push.TargetType, addr string) push.Target {
	t.Helper()
	tg, err := e.h.Engine.BindTarget(ctx, push.Target{BotID: bot.ID, Type: tt, Address: addr})
	if err != nil {
		t.Fatalf("bind %s %q: %v", tt, addr, err)
	}
	return tg
}

// send sends one message and returns its job once settled.
func (e *env) send(t *testing.T, bot push.Bot, tg push.Target, m push.Message) push.Job {
	t.Helper()
	res, err := e.h.Engine.Send(ctx, push.SendRequest{AccountID: e.acct.ID, BotID: bot.ID, TargetID: tg.ID, Message: m})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	j := res.Jobs[0]
	if !j.State.Settled() {
		j = e.waitSettled(t, j.ID)
	}
	return j
}

func (e *env) waitSettled(t *testing.T, id string) push.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := e.h.Engine.JobByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State.Settled() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", id, j.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func text(s string) push.Message     { return push.Message{Type: push.Text, Content: s} }
func markdown(s string) push.Message { return push.Message{Type: push.Markdown, Content: s} }
func image(u, caption string) push.Message {
	return push.Message{Type: push.Image, ImageURL: u, Content: caption}
}
