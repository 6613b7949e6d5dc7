package wechat_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms/wechat"
	"github.com/heraldpush/herald/push"
)

// listener is a Herald with a WeChat bot that hears its followers at its
// webhook, and the account on the fake WeChat whose server configuration
// points there, in one mode.
type listener struct {
	*env
	token, aesKey string
}

// newListener makes the bot and configures the account's server, which
// passes WeChat's URL check (the GET handshake) first.
func newListener(t *testing.T, mode string) *listener {
	t.Helper()
	e := &env{PlatformEnv: testkit.NewPlatformEnv(t, "wechat"), f: fake.NewWeChat(t)}
	e.appID, e.secret = e.f.NewApp()
	l := &listener{env: e, token: fake.WxCallbackToken()}
	cfg := map[string]any{"token": l.token}
	if mode != fake.WeChatPlain {
		l.aesKey = fake.WxAESKey()
		cfg["encoding_aes_key"] = l.aesKey
	}
	e.bot = e.Bot(t, e.f.BotConfig(e.appID, e.secret), cfg)
	if err := e.f.Configure(e.appID, fake.WeChatServer{URL: l.hook(), Token: l.token, EncodingAESKey: l.aesKey, Mode: mode}); err != nil {
		t.Fatalf("the account's server configuration: %v", err)
	}
	return l
}

func (l *listener) hook() string { return l.H.Root + push.WebhookPath(l.bot.ID) }

// code makes a bind code of the bot.
func (l *listener) code(t *testing.T, ttl time.Duration) push.NewBindCode {
	t.Helper()
	c, err := l.H.Engine.BindCodes().Create(ctx, push.System(), push.BindCodeCreate{BotID: l.bot.ID, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// targets returns the bot's targets.
func (l *listener) targets(t *testing.T) []push.Target {
	t.Helper()
	p, err := l.H.Engine.Targets().List(ctx, push.System(), push.TargetFilter{BotID: l.bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// bindCode returns the state of a bind code.
func (l *listener) bindCode(t *testing.T, id int64) push.BindCode {
	t.Helper()
	c, err := l.H.Engine.BindCodes().Get(ctx, push.System(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// replied checks that a callback was answered with a right passive reply
// (the fake decrypted and checked it) that contains want.
func replied(t *testing.T, r fake.WxPush, want string) {
	t.Helper()
	if r.Err != nil || r.Status != http.StatusOK || r.Problem != "" || !strings.Contains(r.Reply, want) {
		t.Fatalf("callback answered %d, reply %q (problem %q, err %v); want a reply with %q", r.Status, r.Reply, r.Problem, r.Err, want)
	}
}

// TestBindByCode: in each mode of the server configuration, a follower
// who sends the code becomes a user target of their openid, the passive
// reply says so, the code is spent; the same follower again keeps the
// target; another follower with the spent code, an unknown code or an
// expired one binds nothing and gets a short reply.
func TestBindByCode(t *testing.T) {
	for _, mode := range []string{fake.WeChatPlain, fake.WeChatCompatible, fake.WeChatSafe} {
		t.Run(mode, func(t *testing.T) {
			l := newListener(t, mode)
			const ada, grace = "oLVPpjqs9BhvzwPj5A-vTYAada01", "oLVPpjqs9BhvzwPj5A-vTYAgrace1"
			c := l.code(t, 0)
			if c.Command != "bind "+c.Code {
				t.Fatalf("command %q", c.Command)
			}
			r := l.f.Write(l.appID, ada, "bind "+c.Code)
			ts := l.targets(t)
			if len(ts) != 1 {
				t.Fatalf("%d targets after the code arrived, want 1", len(ts))
			}
			got := ts[0]
			if got.Type != push.TargetUser || got.Address != ada || got.Presence != push.PresenceActive {
				t.Fatalf("bound %+v", got)
			}
			replied(t, r, fmt.Sprintf("target %d of %s", got.ID, l.bot.Name))
			// WeChat delivers the message again (it saw no answer in time):
			// handled once, so no second reply.
			if r := l.f.Redeliver(l.appID); r.Status != http.StatusOK || r.Reply != "" || r.Problem != "" {
				t.Fatalf("the message delivered again: %+v", r)
			}
			st, err := l.H.Engine.Events().Status(ctx, push.System(), l.bot.ID)
			if err != nil || st.Mode != push.ReceiveWebhook || !st.Running || st.WebhookPath != push.WebhookPath(l.bot.ID) || st.Targets != 1 {
				t.Fatalf("receiver status %+v, %v", st, err)
			}
			if bc := l.bindCode(t, c.ID); bc.UsesLeft != 0 || bc.LastTargetID != got.ID {
				t.Fatalf("code after use: %d uses left, last target %d; want 0, %d", bc.UsesLeft, bc.LastTargetID, got.ID)
			}
			// Again from the same follower: the same target.
			replied(t, l.f.Write(l.appID, ada, "bind "+c.Code), "Already bound")
			if n := len(l.targets(t)); n != 1 {
				t.Fatalf("%d targets after the same follower sent the code again", n)
			}
			// The spent code, an unknown one and an expired one bind nothing.
			replied(t, l.f.Write(l.appID, grace, "bind "+c.Code), "unknown, used or expired")
			replied(t, l.f.Write(l.appID, grace, "bind NOTACODE"), "unknown, used or expired")
			old := l.code(t, time.Minute)
			l.H.Clock.Advance(2 * time.Minute)
			replied(t, l.f.Write(l.appID, grace, "bind "+old.Code), "unknown, used or expired")
			if n := len(l.targets(t)); n != 1 {
				t.Fatalf("%d targets after bad codes, want 1", n)
			}
			if bc := l.bindCode(t, old.ID); bc.UsesLeft != 1 {
				t.Fatalf("the expired code has %d uses left, want 1", bc.UsesLeft)
			}
			// A message that is no command gets no reply ("success").
			if r := l.f.Write(l.appID, ada, "hello"); r.Status != http.StatusOK || r.Reply != "" || r.Problem != "" {
				t.Fatalf("a plain message: %+v", r)
			}
			// A send to the bound follower is delivered.
			before := len(l.f.Messages())
			if j := l.send(t, got, text("hello")); j.State != push.StateSucceeded {
				t.Fatalf("send: %s %s", j.State, j.Error)
			}
			if m := l.f.Messages()[before]; m.ToUser != ada || m.Content != "hello" {
				t.Fatalf("delivered %+v", m)
			}
		})
	}
}

// TestQRCode: a bind code comes with a parametric QR code (QR_STR_SCENE,
// the code as its scene, lasting as long as the code); scanning it
// follows the account and binds in one step, and a follower's scan binds
// too. An account that may not create QR codes (unverified) falls back to
// the typed code.
func TestQRCode(t *testing.T) {
	l := newListener(t, fake.WeChatSafe)
	c := l.code(t, 2*time.Hour)
	if !strings.HasPrefix(c.Link.QRURL, wechat.ShowQRCode) || c.Link.URL == "" {
		t.Fatalf("link %+v", c.Link)
	}
	ticket, _ := url.QueryUnescape(strings.TrimPrefix(c.Link.QRURL, wechat.ShowQRCode))
	qrs := l.f.QRCodes()
	if len(qrs) != 1 {
		t.Fatalf("%d QR codes made, want 1", len(qrs))
	}
	want := fake.WeChatQRCode{AppID: l.appID, Ticket: ticket, URL: c.Link.URL, Action: "QR_STR_SCENE", Scene: c.Code, ExpireSeconds: 7200}
	if diff := cmp.Diff(want, qrs[0], cmpIgnoreExpiry); diff != "" {
		t.Fatalf("QR code (-want +got):\n%s", diff)
	}
	// A user who does not follow the account scans it: subscribe with
	// qrscene_<code>, bound at once.
	const ada = "oLVPpjqs9BhvzwPj5A-vTYAscan01"
	r := l.f.Scan(l.appID, ada, ticket)
	ts := l.targets(t)
	if len(ts) != 1 || ts[0].Address != ada || ts[0].Type != push.TargetUser {
		t.Fatalf("targets after the scan: %+v", ts)
	}
	replied(t, r, fmt.Sprintf("target %d of %s", ts[0].ID, l.bot.Name))
	if p := l.f.Pushes(); p[len(p)-1].What != "subscribe" {
		t.Fatalf("the scan pushed %q, want subscribe", p[len(p)-1].What)
	}
	// A follower scans another code's QR code: SCAN, bound.
	const grace = "oLVPpjqs9BhvzwPj5A-vTYAscan02"
	l.f.Subscribe(l.appID, grace)
	c2 := l.code(t, 0)
	ticket2, _ := url.QueryUnescape(strings.TrimPrefix(c2.Link.QRURL, wechat.ShowQRCode))
	r = l.f.Scan(l.appID, grace, ticket2)
	if p := l.f.Pushes(); p[len(p)-1].What != "SCAN" {
		t.Fatalf("the scan pushed %q, want SCAN", p[len(p)-1].What)
	}
	replied(t, r, "Bound")
	if n := len(l.targets(t)); n != 2 {
		t.Fatalf("%d targets, want 2", n)
	}

	t.Run("unverified", func(t *testing.T) {
		l := newListener(t, fake.WeChatPlain)
		l.f.SetUnverified(l.appID)
		c := l.code(t, 0)
		if c.Link != (push.BindLink{}) || c.Command != "bind "+c.Code {
			t.Fatalf("an unverified account's code: link %+v, command %q; want no link and the typed command", c.Link, c.Command)
		}
		r := l.f.Write(l.appID, "oLVPpjqs9BhvzwPj5A-vTYAtyped1", c.Command)
		replied(t, r, "Bound")
	})
}

var cmpIgnoreExpiry = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ExpiresAt" }, cmp.Ignore())

// TestGoneTargets: a follower who unfollows makes their target gone:
// sends to it are refused before anything is charged; following again
// makes it active, and sends are delivered.
func TestGoneTargets(t *testing.T) {
	l := newListener(t, fake.WeChatSafe)
	const ada = "oLVPpjqs9BhvzwPj5A-vTYAgone01"
	c := l.code(t, 0)
	l.f.Write(l.appID, ada, "bind "+c.Code)
	ts := l.targets(t)
	if len(ts) != 1 {
		t.Fatalf("%d targets, want 1", len(ts))
	}
	target := ts[0]
	if r := l.f.Unsubscribe(l.appID, ada); r.Status != http.StatusOK || r.Reply != "" {
		t.Fatalf("unsubscribe: %+v", r)
	}
	if p := l.targets(t)[0].Presence; p != push.PresenceGone {
		t.Fatalf("presence %q after unsubscribe, want gone", p)
	}
	_, err := l.H.Engine.Send(ctx, push.AccountPrincipal(l.Account.ID), push.SendRequest{BotID: l.bot.ID, TargetID: target.ID, Message: text("hi")})
	if push.ReasonOf(err) != "target_gone" || !strings.Contains(err.Error(), "unfollowed") {
		t.Fatalf("a send to a gone target: %v; want target_gone", err)
	}
	l.f.Subscribe(l.appID, ada)
	if p := l.targets(t)[0].Presence; p != push.PresenceActive {
		t.Fatalf("presence %q after subscribe, want active", p)
	}
	if j := l.send(t, target, text("welcome back")); j.State != push.StateSucceeded {
		t.Fatalf("a send after subscribe: %s %s", j.State, j.Error)
	}
}

// TestWebhookRefusesWhatDoesNotVerify: a callback with a bad signature,
// signed with another token, dated outside the window, encrypted with
// another key or for another account, or plaintext to a bot that takes
// ciphertext only, is refused with 401 and binds nothing; so is a URL
// check that does not verify, and a callback to an unknown bot.
func TestWebhookRefusesWhatDoesNotVerify(t *testing.T) {
	tests := []struct {
		name, mode string
		tamper     fake.WxTamper
	}{
		{"bad signature", fake.WeChatPlain, fake.WxTamper{Signature: strings.Repeat("a", 40)}},
		{"wrong token", fake.WeChatPlain, fake.WxTamper{Token: "notthetoken"}},
		{"replayed old timestamp", fake.WeChatPlain, fake.WxTamper{Age: 10 * time.Minute}},
		{"from the future", fake.WeChatSafe, fake.WxTamper{Age: -10 * time.Minute}},
		{"bad msg_signature", fake.WeChatSafe, fake.WxTamper{Signature: strings.Repeat("b", 40)}},
		{"wrong token, safe", fake.WeChatSafe, fake.WxTamper{Token: "notthetoken"}},
		{"another AES key", fake.WeChatSafe, fake.WxTamper{AESKey: fake.WxAESKey()}},
		{"for another account", fake.WeChatSafe, fake.WxTamper{ReceiveID: "wx0000000000000000"}},
		{"not a ciphertext", fake.WeChatCompatible, fake.WxTamper{Cipher: "bm90IGEgY2lwaGVydGV4dA=="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newListener(t, tc.mode)
			c := l.code(t, 0)
			r := l.f.WriteTampered(l.appID, "oLVPpjqs9BhvzwPj5A-vTYAevil01", "bind "+c.Code, tc.tamper)
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
	t.Run("plaintext to a bot with a key", func(t *testing.T) {
		l := newListener(t, fake.WeChatSafe)
		// The account switched to plaintext without the bot knowing.
		if err := l.f.Configure(l.appID, fake.WeChatServer{URL: l.hook(), Token: l.token, Mode: fake.WeChatPlain}); err != nil {
			t.Fatal(err)
		}
		c := l.code(t, 0)
		if r := l.f.Write(l.appID, "oLVPpjqs9BhvzwPj5A-vTYAevil02", "bind "+c.Code); r.Status != http.StatusUnauthorized {
			t.Fatalf("answered %d, want 401", r.Status)
		}
		if n := len(l.targets(t)); n != 0 {
			t.Fatalf("%d targets", n)
		}
	})
	t.Run("URL checks", func(t *testing.T) {
		l := newListener(t, fake.WeChatPlain)
		if err := l.f.Configure(l.appID, fake.WeChatServer{URL: l.hook(), Token: "anothertoken", Mode: fake.WeChatPlain}); err == nil {
			t.Fatal("a URL check signed with another token passed")
		}
		if err := l.f.Configure(l.appID, fake.WeChatServer{URL: l.H.Root + push.WebhookPath(9999), Token: l.token}); err == nil {
			t.Fatal("a URL check of an unknown bot passed")
		}
		for _, path := range []string{push.WebhookPath(l.bot.ID) + "?signature=x&timestamp=1&nonce=2&echostr=3", push.WebhookPath(9999), "/api/hooks/abc"} {
			resp, err := http.Post(l.H.Root+path, "text/xml", strings.NewReader("<xml></xml>"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("POST %s: %d, want 401", path, resp.StatusCode)
			}
		}
	})
}
