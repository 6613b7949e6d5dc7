package feishu_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// listener is a Herald with a Feishu app bot that hears its users in one
// mode, and the means to act as its users.
type listener struct {
	h    *testkit.Herald
	fs   *fake.Feishu
	app  fake.FeishuApp
	acct push.Account
	key  string
	bot  push.Bot
}

// The modes a bot hears its users in: the long connection, and the
// webhook with the app's events in plain JSON or encrypted and signed.
var modes = []string{"longconn", "webhook", "webhook-encrypted"}

func newListener(t *testing.T, mode string, opts ...testkit.Option) *listener {
	t.Helper()
	h := testkit.New(t, append([]testkit.Option{testkit.WithPoints(push.Points{Enabled: true})}, opts...)...)
	fs := fake.NewFeishu(t)
	fs.SetPingInterval(1)
	app := fs.NewApp()
	if mode == "webhook-encrypted" {
		app = fs.NewEncryptedApp()
	}
	cfg := map[string]any{"app_id": app.AppID, "app_secret": app.AppSecret, "api_base": fs.URL(), "receive": strings.TrimSuffix(mode, "-encrypted")}
	if cfg["receive"] == "webhook" {
		cfg["verification_token"] = app.VerificationToken
		if app.EncryptKey != "" {
			cfg["encrypt_key"] = app.EncryptKey
		}
	}
	a := h.Account(t, "acme")
	l := &listener{h: h, fs: fs, app: app, acct: a, key: h.Key(t, a.ID)}
	l.bot = h.PlatformBot(t, a.ID, "feishu", cfg)
	if cfg["receive"] == "webhook" {
		if err := fs.Subscribe(app, h.Root+push.WebhookPath(l.bot.ID)); err != nil {
			t.Fatalf("setting the request URL: %v", err)
		}
	} else {
		eventually(t, "the long connection", func() bool { return fs.LongConn(app).Live == 1 })
	}
	return l
}

func (l *listener) code(t *testing.T, tt push.TargetType, uses int, ttl time.Duration) push.NewBindCode {
	t.Helper()
	c, err := l.h.Engine.BindCodes().Create(ctx, push.System(), push.BindCodeCreate{BotID: l.bot.ID, Type: tt, Uses: uses, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually waits (10 s at most) for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replies returns the texts the bot sent to a receive id.
func (l *listener) replies(to string) []string {
	var out []string
	for _, m := range l.fs.Messages() {
		if m.ReceiveID == to && m.AppID == l.app.AppID {
			out = append(out, m.Text)
		}
	}
	return out
}

func (l *listener) targets(t *testing.T) []push.Target {
	t.Helper()
	p, err := l.h.Engine.Targets().List(ctx, push.System(), push.TargetFilter{BotID: l.bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

func (l *listener) send(t *testing.T, target push.Target) testkit.Response {
	t.Helper()
	return l.h.Call(t, "POST", "/openapi/v1/push/private", l.key, map[string]any{"botId": l.bot.ID, "target": fmt.Sprint(target.ID), "content": "hello"})
}

func userID(n int) string  { return fmt.Sprintf("ou_%032x", 0xada0+n) }
func groupID(n int) string { return fmt.Sprintf("oc_%032x", 0x9e0+n) }

// TestBindByCode: in every mode, a user who sends "bind <code>" in a
// private chat becomes a user target (open_id), a group that sends a
// group code with the bot mentioned becomes a group target (chat_id), the
// bot says so in the chat, the code is spent; the same chat again keeps
// its target; a used, unknown, expired or wrong-type code binds nothing
// and is answered so.
func TestBindByCode(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			l := newListener(t, mode)
			fs := l.fs
			ada := fake.FeishuChat{Type: "p2p", OpenID: userID(1)}
			c := l.code(t, "", 1, 0)
			fs.Write(l.app, ada, "bind "+c.Code)
			eventually(t, "the user's binding", func() bool { return len(l.targets(t)) == 1 })
			got := l.targets(t)[0]
			if got.Type != push.TargetUser || got.Address != ada.OpenID || got.Presence != push.PresenceActive {
				t.Fatalf("bound %+v", got)
			}
			eventually(t, "the reply", func() bool { return len(l.replies(ada.OpenID)) == 1 })
			if r := l.replies(ada.OpenID)[0]; !strings.Contains(r, fmt.Sprintf("target %d of %s", got.ID, l.bot.Name)) {
				t.Fatalf("reply %q", r)
			}
			// Again from the same chat: the same target, no use spent.
			fs.Write(l.app, ada, "bind "+c.Code)
			eventually(t, "the second reply", func() bool { return len(l.replies(ada.OpenID)) == 2 })
			if r := l.replies(ada.OpenID)[1]; !strings.Contains(r, "Already bound") || len(l.targets(t)) != 1 {
				t.Fatalf("second time: %q, %d targets", r, len(l.targets(t)))
			}
			// Spent, unknown and expired codes bind nothing.
			grace := fake.FeishuChat{Type: "p2p", OpenID: userID(2)}
			expired := l.code(t, "", 1, time.Minute)
			l.h.Clock.Advance(2 * time.Minute)
			for i, text := range []string{"bind " + c.Code, "bind NOTACODE", "bind " + expired.Code} {
				fs.Write(l.app, grace, text)
				eventually(t, "the refusal", func() bool { return len(l.replies(grace.OpenID)) == i+1 })
			}
			for _, r := range l.replies(grace.OpenID) {
				if !strings.Contains(r, "unknown, used or expired") {
					t.Fatalf("refusal %q", r)
				}
			}
			if n := len(l.targets(t)); n != 1 {
				t.Fatalf("%d targets after bad codes, want 1", n)
			}
			// A group code: refused in a private chat, bound in a group
			// that mentions the bot.
			gc := l.code(t, push.TargetGroup, 1, 0)
			fs.Write(l.app, fake.FeishuChat{Type: "p2p", OpenID: userID(3)}, "bind "+gc.Code)
			eventually(t, "the wrong-type reply", func() bool { return len(l.replies(userID(3))) == 1 })
			group := fake.FeishuChat{Type: "group", OpenID: userID(3), ChatID: groupID(1), Mention: true}
			fs.Write(l.app, group, "bind "+gc.Code)
			eventually(t, "the group's binding", func() bool { return len(l.targets(t)) == 2 })
			var g push.Target
			for _, x := range l.targets(t) {
				if x.Type == push.TargetGroup {
					g = x
				}
			}
			if g.Address != group.ChatID {
				t.Fatalf("group target %+v", g)
			}
			eventually(t, "the group's reply", func() bool { return len(l.replies(group.ChatID)) == 1 })
			if r := l.replies(group.ChatID)[0]; !strings.Contains(r, fmt.Sprintf("target %d of", g.ID)) {
				t.Fatalf("group reply %q", r)
			}
			// Sends to the bound targets arrive.
			for _, target := range []push.Target{got, g} {
				if r := l.send(t, target); r.Status != http.StatusOK {
					t.Fatalf("send to %s: %d %s", target.Address, r.Status, r.Body)
				}
			}
			codes, _ := l.h.Engine.BindCodes().List(ctx, push.System(), push.BindCodeFilter{BotID: l.bot.ID})
			for _, x := range codes.Items {
				if x.ID != expired.ID && (x.UsesLeft != 0 || x.LastTargetID == 0) {
					t.Errorf("code %d: %d uses left, last target %d; want spent", x.ID, x.UsesLeft, x.LastTargetID)
				}
			}
		})
	}
}

// TestGroupMessageWithoutMention: a group message that does not mention
// the bot is not addressed to it, and binds nothing.
func TestGroupMessageWithoutMention(t *testing.T) {
	l := newListener(t, "longconn")
	gc := l.code(t, push.TargetGroup, 1, 0)
	l.fs.Write(l.app, fake.FeishuChat{Type: "group", OpenID: userID(1), ChatID: groupID(1)}, "bind "+gc.Code)
	eventually(t, "the event acknowledged", func() bool { return l.fs.PendingEvents(l.app) == 0 })
	if n := len(l.targets(t)); n != 0 {
		t.Fatalf("%d targets bound by a message to someone else", n)
	}
}

// TestGoneTargets: a group that removes the bot makes its target gone:
// sends to it are refused with the reason and charged nothing; adding the
// bot back makes it active again, and sends are delivered.
func TestGoneTargets(t *testing.T) {
	for _, mode := range []string{"longconn", "webhook-encrypted"} {
		t.Run(mode, func(t *testing.T) {
			l := newListener(t, mode)
			group := fake.FeishuChat{Type: "group", OpenID: userID(1), ChatID: groupID(7), Mention: true}
			c := l.code(t, push.TargetGroup, 1, 0)
			l.fs.Write(l.app, group, "bind "+c.Code)
			eventually(t, "the binding", func() bool { return len(l.targets(t)) == 1 })
			target := l.targets(t)[0]
			l.fs.RemoveBot(l.app, group.ChatID, "ops")
			eventually(t, "the target gone", func() bool { return l.targets(t)[0].Presence == push.PresenceGone })
			before := l.h.Balance(t, l.acct.ID)
			r := l.send(t, target)
			var e struct{ Error, Message string }
			r.Decode(t, &e)
			if r.Status != http.StatusBadRequest || e.Error != "target_gone" || !strings.Contains(e.Message, "removed the bot") {
				t.Fatalf("a send to a gone target: %d %s", r.Status, r.Body)
			}
			if l.h.Balance(t, l.acct.ID) != before {
				t.Fatal("a refused send to a gone target was charged")
			}
			l.fs.AddBot(l.app, group.ChatID, "ops")
			eventually(t, "the target back", func() bool { return l.targets(t)[0].Presence == push.PresenceActive })
			sent := len(l.replies(group.ChatID))
			if r := l.send(t, target); r.Status != http.StatusOK {
				t.Fatalf("a send after the bot was added back: %d %s", r.Status, r.Body)
			}
			eventually(t, "the message delivered", func() bool { return len(l.replies(group.ChatID)) == sent+1 })
		})
	}
}

// hookRequest is a request to the bot's webhook as a test forges it.
type hookRequest struct {
	to                 *listener
	name, method, path string
	body               []byte
	header             []string
}

// TestWebhookRefusesWhatDoesNotVerify: a request whose signature is
// missing or wrong, whose timestamp is old, whose verification token is
// wrong, or for an unknown bot, is refused with 401 and nothing is
// stored; the URL check is answered only with the right token; an event
// delivered twice is handled once.
func TestWebhookRefusesWhatDoesNotVerify(t *testing.T) {
	enc := newListener(t, "webhook-encrypted")
	plain := newListener(t, "webhook", testkit.WithDB(t.TempDir()+"/plain.db"))
	now := strconv.FormatInt(time.Now().Unix(), 10)
	old := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	bindEvent := func(l *listener, token, code string) []byte {
		app := l.app
		app.VerificationToken = token
		content, _ := json.Marshal(map[string]string{"text": "bind " + code})
		_, body := fake.FeishuEvent(app, "im.message.receive_v1", map[string]any{
			"sender":  map[string]any{"sender_id": map[string]any{"open_id": userID(9)}, "sender_type": "user"},
			"message": map[string]any{"message_id": "om_1", "chat_id": groupID(9), "chat_type": "p2p", "message_type": "text", "content": string(content)}})
		return body
	}
	encrypted := func(plain []byte) []byte {
		b, _ := json.Marshal(map[string]string{"encrypt": fake.FeishuEncrypt(enc.app.EncryptKey, plain)})
		return b
	}
	signed := func(ts string, body []byte) []string {
		return []string{"X-Lark-Request-Timestamp", ts, "X-Lark-Request-Nonce", "n0nce", "X-Lark-Signature", fake.FeishuSign(ts, "n0nce", enc.app.EncryptKey, body)}
	}
	ec := enc.code(t, "", 5, 0)
	pc := plain.code(t, "", 5, 0)
	encBody := encrypted(bindEvent(enc, enc.app.VerificationToken, ec.Code))
	encPath := fmt.Sprint("/hooks/", enc.bot.ID)
	plainPath := fmt.Sprint("/hooks/", plain.bot.ID)
	badSig := signed(now, encBody)
	badSig[5] = strings.Repeat("0", 64)
	challenge := func(token string) []byte {
		b, _ := json.Marshal(map[string]string{"challenge": "c-123", "token": token, "type": "url_verification"})
		return b
	}
	for _, tt := range []hookRequest{
		{enc, "no signature", "POST", encPath, encBody, []string{"X-Lark-Request-Timestamp", now}},
		{enc, "wrong signature", "POST", encPath, encBody, badSig},
		{enc, "old timestamp", "POST", encPath, encBody, signed(old, encBody)},
		{enc, "signed but not encrypted", "POST", encPath, bindEvent(enc, enc.app.VerificationToken, ec.Code), signed(now, bindEvent(enc, enc.app.VerificationToken, ec.Code))},
		{enc, "encrypted with another key", "POST", encPath, []byte(`{"encrypt":"` + fake.FeishuEncrypt("another key", bindEvent(enc, enc.app.VerificationToken, ec.Code)) + `"}`), nil},
		{plain, "wrong token", "POST", plainPath, bindEvent(plain, "wrong-token", pc.Code), []string{"X-Lark-Request-Timestamp", now}},
		{plain, "no token", "POST", plainPath, bindEvent(plain, "", pc.Code), nil},
		{plain, "plain, old timestamp", "POST", plainPath, bindEvent(plain, plain.app.VerificationToken, pc.Code), []string{"X-Lark-Request-Timestamp", old}},
		{plain, "GET", "GET", plainPath, nil, nil},
		{plain, "URL check with a wrong token", "POST", plainPath, challenge("wrong"), nil},
		{enc, "encrypted URL check with a wrong token", "POST", encPath, encrypted(challenge("wrong")), nil},
		{plain, "unknown bot", "POST", "/hooks/9999", bindEvent(plain, plain.app.VerificationToken, pc.Code), nil},
		{plain, "bad bot id", "POST", "/hooks/abc", bindEvent(plain, plain.app.VerificationToken, pc.Code), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.to.h.Call(t, tt.method, tt.path, "", tt.body, tt.header...)
			if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "bad_signature") || strings.Contains(string(r.Body), "c-123") {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if n := len(enc.targets(t)) + len(plain.targets(t)); n != 0 {
				t.Fatalf("%d targets bound by a request that does not verify", n)
			}
		})
	}
	// The URL check, plain and encrypted.
	for _, tt := range []hookRequest{
		{plain, "plain", "POST", plainPath, challenge(plain.app.VerificationToken), nil},
		{enc, "encrypted", "POST", encPath, encrypted(challenge(enc.app.VerificationToken)), nil},
	} {
		r := tt.to.h.Call(t, tt.method, tt.path, "", tt.body, tt.header...)
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"challenge":"c-123"}` {
			t.Fatalf("URL check %s: %d %s", tt.name, r.Status, r.Body)
		}
	}
	// Delivered twice (Feishu retries an event it saw no answer to): one
	// target, one use spent.
	for range 2 {
		if r := enc.h.Call(t, "POST", encPath, "", encBody, signed(now, encBody)...); r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	if n := len(enc.targets(t)); n != 1 {
		t.Fatalf("%d targets after one event delivered twice, want 1", n)
	}
	codes, _ := enc.h.Engine.BindCodes().List(ctx, push.System(), push.BindCodeFilter{BotID: enc.bot.ID})
	if codes.Items[0].UsesLeft != 4 {
		t.Fatalf("%d uses left, want 4: the event was handled twice", codes.Items[0].UsesLeft)
	}
}

// TestLongConnection: the bot pings on the server's interval and takes
// events split into parts; when the connection drops mid-stream with
// events unacknowledged (and acknowledgements lost), it connects again,
// the failure is reported in the bot's status, the events are delivered
// again and each is handled once.
func TestLongConnection(t *testing.T) {
	l := newListener(t, "longconn")
	fs := l.fs
	fs.SplitEvents(l.app, 3)
	fs.LoseAcks(l.app, 2)
	fs.DropConnection(l.app, 4)
	c := l.code(t, "", 100, 0)
	var ids []string
	for i := range 8 {
		ids = append(ids, fs.Write(l.app, fake.FeishuChat{Type: "p2p", OpenID: userID(100 + i)}, "bind "+c.Code))
	}
	eventually(t, "eight bindings", func() bool { return len(l.targets(t)) == 8 })
	eventually(t, "every event acknowledged", func() bool { return fs.PendingEvents(l.app) == 0 })
	redelivered := 0
	for _, id := range ids {
		if fs.Deliveries(l.app, id) > 1 {
			redelivered++
		}
	}
	if redelivered == 0 {
		t.Fatal("no event was delivered twice: the drop and the lost acknowledgements did not happen")
	}
	for i := range 8 {
		if n := len(l.replies(userID(100 + i))); n != 1 {
			t.Errorf("user %d got %d replies, want 1", i, n)
		}
	}
	codes, _ := l.h.Engine.BindCodes().List(ctx, push.System(), push.BindCodeFilter{BotID: l.bot.ID})
	if codes.Items[0].UsesLeft != 92 {
		t.Fatalf("%d uses left after 8 chats bound, want 92", codes.Items[0].UsesLeft)
	}
	st := fs.LongConn(l.app)
	if st.Connections < 2 || st.Acks != 8 {
		t.Fatalf("long connections %+v: want a reconnection and 8 acknowledgements", st)
	}
	status, err := l.h.Engine.Events().Status(ctx, push.System(), l.bot.ID)
	if err != nil || status.Mode != push.ReceiveOutbound || status.Failures == 0 || !strings.Contains(status.Error, "long connection") {
		t.Fatalf("status %+v, %v: want the dropped connection reported", status, err)
	}
	eventually(t, "a ping", func() bool { return fs.LongConn(l.app).Pings > 0 })
}

// TestLongConnectionRefused: an app secret Feishu refuses is a receiver
// failure reported in the bot's status, without the secret.
func TestLongConnectionRefused(t *testing.T) {
	h := testkit.New(t)
	fs := fake.NewFeishu(t)
	app := fs.NewApp()
	a := h.Account(t, "acme")
	bot := h.PlatformBot(t, a.ID, "feishu", map[string]any{"app_id": app.AppID, "app_secret": "wrongsecret123", "api_base": fs.URL(), "receive": "longconn"})
	var st push.ReceiverStatus
	eventually(t, "the failure reported", func() bool {
		st, _ = h.Engine.Events().Status(ctx, push.System(), bot.ID)
		return st.Failures > 0
	})
	if !strings.Contains(st.Error, "10003") || strings.Contains(st.Error, "wrongsecret123") || st.Running && fs.LongConn(app).Live != 0 {
		t.Fatalf("status %+v", st)
	}
}

// TestLongConnectionFailover: the bot's long connection runs on one node
// of two; when that node stops, the other opens it within a few leases,
// and the events the first left unacknowledged, and the later ones, are
// each handled once.
func TestLongConnectionFailover(t *testing.T) {
	db := t.TempDir() + "/failover.db"
	a := newListener(t, "longconn", testkit.WithDB(db))
	b := testkit.New(t, testkit.WithDB(db))
	fs := a.fs
	c := a.code(t, "", 100, 0)
	for i := range 4 {
		fs.Write(a.app, fake.FeishuChat{Type: "p2p", OpenID: userID(200 + i)}, "bind "+c.Code)
	}
	eventually(t, "the first bindings", func() bool { return len(a.targets(t)) == 4 })
	// Each confirmation is sent after its binding is stored; the node stops
	// once they are out (one it had not sent yet would go with it: the
	// other node sees the event as handled and does not reply again).
	confirmed := func(from, to int) func() bool {
		return func() bool {
			for i := from; i < to; i++ {
				if len(a.replies(userID(200+i))) == 0 {
					return false
				}
			}
			return true
		}
	}
	eventually(t, "the first confirmations", confirmed(0, 4))
	a.h.Stop()
	for i := 4; i < 8; i++ {
		fs.Write(a.app, fake.FeishuChat{Type: "p2p", OpenID: userID(200 + i)}, "bind "+c.Code)
	}
	eventually(t, "the other node's bindings", func() bool {
		p, _ := b.Engine.Targets().List(ctx, push.System(), push.TargetFilter{BotID: a.bot.ID})
		return len(p.Items) == 8
	})
	if st := fs.LongConn(a.app); st.Connections < 2 || st.Live != 1 {
		t.Fatalf("long connections %+v: want one reopened by the other node", st)
	}
	codes, _ := b.Engine.BindCodes().List(ctx, push.System(), push.BindCodeFilter{BotID: a.bot.ID})
	if codes.Items[0].UsesLeft != 92 {
		t.Fatalf("%d uses left after 8 chats bound, want 92", codes.Items[0].UsesLeft)
	}
	// Each user is bound once (above) and confirmed once.
	eventually(t, "the other node's confirmations", confirmed(4, 8))
	time.Sleep(200 * time.Millisecond) // a second reply, if one were under way, arrives
	for i := range 8 {
		if n := len(a.replies(userID(200 + i))); n != 1 {
			t.Errorf("user %d got %d replies, want 1", i, n)
		}
	}
}
