package wecom_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/push"
)

// listener is a Herald with a WeCom app bot that hears its members at its
// webhook, and the app on the fake WeCom whose callback points there.
type listener struct {
	*env
	app           fake.WeComApp
	bot           push.Bot
	token, aesKey string
}

// newListener makes the bot and sets the app's callback, which passes
// WeCom's URL check (the GET handshake with an encrypted echostr) first.
func newListener(t *testing.T) *listener {
	t.Helper()
	l := &listener{env: newEnv(t), token: fake.WxCallbackToken(), aesKey: fake.WxAESKey()}
	l.app = l.wc.NewApp()
	l.bot = l.Bot(t, l.app.Config(l.wc), map[string]any{"token": l.token, "encoding_aes_key": l.aesKey})
	if err := l.wc.Configure(l.app, l.hook(), l.token, l.aesKey); err != nil {
		t.Fatalf("the app's callback: %v", err)
	}
	return l
}

func (l *listener) hook() string { return l.H.Root + push.WebhookPath(l.bot.ID) }

func (l *listener) code(t *testing.T, ttl time.Duration) push.NewBindCode {
	t.Helper()
	c, err := l.H.Engine.BindCodes().Create(ctx, push.System(), push.BindCodeCreate{BotID: l.bot.ID, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (l *listener) targets(t *testing.T) []push.Target {
	t.Helper()
	p, err := l.H.Engine.Targets().List(ctx, push.System(), push.TargetFilter{BotID: l.bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

func (l *listener) bindCode(t *testing.T, id int64) push.BindCode {
	t.Helper()
	c, err := l.H.Engine.BindCodes().Get(ctx, push.System(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// replied checks that a callback was answered with a right encrypted
// passive reply (the fake decrypted and checked it) that contains want.
func replied(t *testing.T, r fake.WxPush, want string) {
	t.Helper()
	if r.Err != nil || r.Status != http.StatusOK || r.Problem != "" || !strings.Contains(r.Reply, want) {
		t.Fatalf("callback answered %d, reply %q (problem %q, err %v); want a reply with %q", r.Status, r.Reply, r.Problem, r.Err, want)
	}
}

// TestBindByCode: a member who sends the code to the app becomes a user
// target of their UserID, the encrypted passive reply says so, the code
// is spent; the same member again keeps the target; another member with
// the spent code, an unknown code or an expired one binds nothing and
// gets a short reply; sends to the bound member are delivered.
func TestBindByCode(t *testing.T) {
	l := newListener(t)
	c := l.code(t, 0)
	if c.Link != (push.BindLink{}) || c.Command != "bind "+c.Code {
		t.Fatalf("code %+v: want the typed command and no link", c)
	}
	r := l.wc.Write(l.app, "ZhangSan", "bind "+c.Code)
	ts := l.targets(t)
	if len(ts) != 1 {
		t.Fatalf("%d targets after the code arrived, want 1", len(ts))
	}
	got := ts[0]
	if got.Type != push.TargetUser || got.Address != "ZhangSan" || got.Presence != push.PresenceActive {
		t.Fatalf("bound %+v", got)
	}
	replied(t, r, fmt.Sprintf("target %d of %s", got.ID, l.bot.Name))
	if bc := l.bindCode(t, c.ID); bc.UsesLeft != 0 || bc.LastTargetID != got.ID {
		t.Fatalf("code after use: %d uses left, last target %d; want 0, %d", bc.UsesLeft, bc.LastTargetID, got.ID)
	}
	replied(t, l.wc.Write(l.app, "ZhangSan", "bind "+c.Code), "Already bound")
	if n := len(l.targets(t)); n != 1 {
		t.Fatalf("%d targets after the same member sent the code again", n)
	}
	replied(t, l.wc.Write(l.app, "LiSi", "bind "+c.Code), "unknown, used or expired")
	replied(t, l.wc.Write(l.app, "LiSi", "绑定 NOTACODE"), "unknown, used or expired")
	old := l.code(t, time.Minute)
	l.H.Clock.Advance(2 * time.Minute)
	replied(t, l.wc.Write(l.app, "LiSi", "bind "+old.Code), "unknown, used or expired")
	if n := len(l.targets(t)); n != 1 {
		t.Fatalf("%d targets after bad codes, want 1", n)
	}
	if bc := l.bindCode(t, old.ID); bc.UsesLeft != 1 {
		t.Fatalf("the expired code has %d uses left, want 1", bc.UsesLeft)
	}
	if r := l.wc.Write(l.app, "ZhangSan", "hello"); r.Status != http.StatusOK || r.Reply != "" || r.Problem != "" {
		t.Fatalf("a plain message: %+v", r)
	}
	before := len(l.wc.Messages())
	if j := l.Send(t, l.bot, got, text("hello")); j.State != push.StateSucceeded {
		t.Fatalf("send: %s %s", j.State, j.Error)
	}
	if m := l.wc.Messages()[before]; m.ToUser != "ZhangSan" || m.Content != "hello" {
		t.Fatalf("delivered %+v", m)
	}
}

// TestGoneTargets: a member who leaves the app's visible range makes
// their target gone: sends are refused before anything is charged;
// entering it again makes the target active, and sends are delivered.
func TestGoneTargets(t *testing.T) {
	l := newListener(t)
	c := l.code(t, 0)
	l.wc.Write(l.app, "WangWu", "bind "+c.Code)
	ts := l.targets(t)
	if len(ts) != 1 {
		t.Fatalf("%d targets, want 1", len(ts))
	}
	target := ts[0]
	if r := l.wc.Unsubscribe(l.app, "WangWu"); r.Status != http.StatusOK || r.Reply != "" {
		t.Fatalf("unsubscribe: %+v", r)
	}
	if p := l.targets(t)[0].Presence; p != push.PresenceGone {
		t.Fatalf("presence %q after unsubscribe, want gone", p)
	}
	_, err := l.H.Engine.Send(ctx, push.AccountPrincipal(l.Account.ID), push.SendRequest{BotID: l.bot.ID, TargetID: target.ID, Message: text("hi")})
	if push.ReasonOf(err) != "target_gone" || !strings.Contains(err.Error(), "visible range") {
		t.Fatalf("a send to a gone target: %v; want target_gone", err)
	}
	l.wc.Subscribe(l.app, "WangWu")
	if p := l.targets(t)[0].Presence; p != push.PresenceActive {
		t.Fatalf("presence %q after subscribe, want active", p)
	}
	if j := l.Send(t, l.bot, target, text("welcome back")); j.State != push.StateSucceeded {
		t.Fatalf("a send after subscribe: %s %s", j.State, j.Error)
	}
}

// TestWebhookRefusesWhatDoesNotVerify: a callback with a bad signature,
// signed with another token, dated outside the window, encrypted with
// another key or for another corp, or whose ciphertext is not one, is
// refused with 401 and binds nothing; so is a URL check that does not
// verify, and a callback to an unknown bot.
func TestWebhookRefusesWhatDoesNotVerify(t *testing.T) {
	tests := []struct {
		name   string
		tamper fake.WxTamper
	}{
		{"bad signature", fake.WxTamper{Signature: strings.Repeat("a", 40)}},
		{"wrong token", fake.WxTamper{Token: "notthetoken"}},
		{"replayed old timestamp", fake.WxTamper{Age: 10 * time.Minute}},
		{"from the future", fake.WxTamper{Age: -10 * time.Minute}},
		{"another AES key", fake.WxTamper{AESKey: fake.WxAESKey()}},
		{"for another corp", fake.WxTamper{ReceiveID: "ww0000000000000000"}},
		{"not a ciphertext", fake.WxTamper{Cipher: "bm90IGEgY2lwaGVydGV4dA=="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newListener(t)
			c := l.code(t, 0)
			r := l.wc.WriteTampered(l.app, "Mallory", "bind "+c.Code, tc.tamper)
			if r.Status != http.StatusUnauthorized || r.Reply != "" {
				t.Fatalf("answered %d %q, want 401", r.Status, r.Reply)
			}
			if n := len(l.targets(t)); n != 0 {
				t.Fatalf("%d targets bound by a callback that does not verify", n)
			}
			if bc := l.bindCode(t, c.ID); bc.UsesLeft != 1 {
				t.Fatalf("the code has %d uses left, want 1", bc.UsesLeft)
			}
		})
	}
	t.Run("URL checks", func(t *testing.T) {
		l := newListener(t)
		if err := l.wc.Configure(l.app, l.hook(), "anothertoken", l.aesKey); err == nil {
			t.Fatal("a URL check signed with another token passed")
		}
		if err := l.wc.Configure(l.app, l.hook(), l.token, fake.WxAESKey()); err == nil {
			t.Fatal("a URL check encrypted with another key passed")
		}
		if err := l.wc.Configure(l.app, l.H.Root+push.WebhookPath(9999), l.token, l.aesKey); err == nil {
			t.Fatal("a URL check of an unknown bot passed")
		}
		q := url.Values{"msg_signature": {"x"}, "timestamp": {fmt.Sprint(time.Now().Unix())}, "nonce": {"1"}, "echostr": {"abc"}}
		for _, path := range []string{push.WebhookPath(l.bot.ID) + "?" + q.Encode(), push.WebhookPath(9999), "/api/hooks/abc"} {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				req, _ := http.NewRequest(method, l.H.Root+path, strings.NewReader("<xml></xml>"))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s %s: %d, want 401", method, path, resp.StatusCode)
				}
			}
		}
	})
}
