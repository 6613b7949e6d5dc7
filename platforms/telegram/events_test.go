package telegram_test

import (
	"context"
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

// listener is a Herald with a Telegram bot that hears its users in one
// mode, and the means to act as its users.
type listener struct {
	h     *testkit.Herald
	acct  push.Account
	key   string
	bot   push.Bot
	token string
}

func newListener(t *testing.T, mode string, opts ...testkit.Option) *listener {
	t.Helper()
	h := testkit.New(t, append([]testkit.Option{testkit.WithPoints(push.Points{Enabled: true})}, opts...)...)
	a := h.Account(t, "acme")
	token := h.Telegram.NewBot()
	bot := h.PlatformBot(t, a.ID, "telegram", map[string]any{"token": token, "api_base": h.Telegram.URL(), "receive": mode})
	return &listener{h: h, acct: a, key: h.Key(t, a.ID), bot: bot, token: token}
}

// code makes a bind code of the bot.
func (l *listener) code(t *testing.T, tt push.TargetType, uses int) push.NewBindCode {
	t.Helper()
	c, err := l.h.Engine.BindCodes().Create(context.Background(), push.System(), push.BindCodeCreate{BotID: l.bot.ID, Type: tt, Uses: uses})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually waits (5 s at most) for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 5 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replies returns the texts the bot sent to a chat.
func (l *listener) replies(chat int64) []string {
	var out []string
	for _, m := range l.h.Telegram.Messages() {
		if m.ChatID == strconv.FormatInt(chat, 10) && m.Token == l.token {
			out = append(out, m.Text)
		}
	}
	return out
}

// targets returns the bot's targets.
func (l *listener) targets(t *testing.T) []push.Target {
	t.Helper()
	p, err := l.h.Engine.Targets().List(context.Background(), push.System(), push.TargetFilter{BotID: l.bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// TestBindByCode: in either mode, a user who sends the code (from the
// deep link: /start <code>) becomes a user target of their chat, a group
// that gets a group code becomes a group target, the bot says so in the
// chat, the code is spent; the same chat again keeps its target; a used,
// unknown or wrong-type code binds nothing and is answered so.
func TestBindByCode(t *testing.T) {
	for _, mode := range []string{"poll", "webhook"} {
		t.Run(mode, func(t *testing.T) {
			l := newListener(t, mode)
			tg := l.h.Telegram
			if mode == "webhook" {
				eventually(t, "the webhook set", func() bool { return tg.Webhook(l.token) != "" })
				if want := l.h.Root + fmt.Sprint("/api/hooks/", l.bot.ID); tg.Webhook(l.token) != want {
					t.Fatalf("webhook %q, want %q", tg.Webhook(l.token), want)
				}
			}
			user := fake.TelegramChat{ID: 4242, Type: "private", Name: "Ada"}
			c := l.code(t, "", 1)
			wantLink := "https://t.me/" + fake.TelegramUsername(tg.BotID(l.token)) + "?start=" + c.Code
			if c.Link.URL != wantLink || c.Command != "bind "+c.Code || len(c.Code) != 8 {
				t.Fatalf("code %+v, link %q; want %q", c.BindCode, c.Link.URL, wantLink)
			}
			tg.Write(l.token, user, "/start "+c.Code)
			eventually(t, "the user's binding", func() bool { return len(l.targets(t)) == 1 })
			got := l.targets(t)[0]
			if got.Type != push.TargetUser || got.Address != "4242" || got.Name != "Ada" || got.Presence != push.PresenceActive {
				t.Fatalf("bound %+v", got)
			}
			eventually(t, "the reply", func() bool { return len(l.replies(4242)) == 1 })
			if r := l.replies(4242)[0]; !strings.Contains(r, fmt.Sprintf("target %d of %s", got.ID, l.bot.Name)) {
				t.Fatalf("reply %q", r)
			}
			// Again from the same chat: the same target, no use spent.
			tg.Write(l.token, user, "bind "+c.Code)
			eventually(t, "the second reply", func() bool { return len(l.replies(4242)) == 2 })
			if r := l.replies(4242)[1]; !strings.Contains(r, "Already bound") || len(l.targets(t)) != 1 {
				t.Fatalf("second time: %q, %d targets", r, len(l.targets(t)))
			}
			// The code is spent: another chat gets nothing.
			other := fake.TelegramChat{ID: 5151, Type: "private", Name: "Grace"}
			tg.Write(l.token, other, "/start "+c.Code)
			eventually(t, "the refusal", func() bool { return len(l.replies(5151)) == 1 })
			tg.Write(l.token, other, "/start NOTACODE")
			eventually(t, "the second refusal", func() bool { return len(l.replies(5151)) == 2 })
			for _, r := range l.replies(5151) {
				if !strings.Contains(r, "unknown, used or expired") {
					t.Fatalf("refusal %q", r)
				}
			}
			// A group code, sent in a group as Telegram's startgroup link does.
			gc := l.code(t, push.TargetGroup, 1)
			if !strings.Contains(gc.Link.URL, "?startgroup="+gc.Code) {
				t.Fatalf("group link %q", gc.Link.URL)
			}
			user2 := fake.TelegramChat{ID: 6161, Type: "private"}
			tg.Write(l.token, user2, "/start "+gc.Code) // a private chat: the wrong type
			eventually(t, "the wrong-type reply", func() bool { return len(l.replies(6161)) == 1 })
			group := fake.TelegramChat{ID: -100777, Type: "supergroup", Title: "ops"}
			tg.Membership(l.token, group, "member")
			tg.Write(l.token, group, "/start@"+fake.TelegramUsername(tg.BotID(l.token))+" "+gc.Code)
			eventually(t, "the group's binding", func() bool { return len(l.targets(t)) == 2 })
			var g push.Target
			for _, x := range l.targets(t) {
				if x.Type == push.TargetGroup {
					g = x
				}
			}
			if g.Address != "-100777" || g.Name != "ops" {
				t.Fatalf("group target %+v", g)
			}
			// Sends to the bound targets arrive.
			for _, target := range []push.Target{got, g} {
				r := l.h.Call(t, "POST", "/openapi/v1/push/private", l.key, map[string]any{"botId": l.bot.ID, "target": fmt.Sprint(target.ID), "content": "hello"})
				if r.Status != http.StatusOK {
					t.Fatalf("send to %s: %d %s", target.Address, r.Status, r.Body)
				}
			}
			codes, _ := l.h.Engine.BindCodes().List(context.Background(), push.System(), push.BindCodeFilter{BotID: l.bot.ID})
			for _, x := range codes.Items {
				if x.UsesLeft != 0 || x.LastTargetID == 0 {
					t.Errorf("code %d: %d uses left, last target %d; want spent", x.ID, x.UsesLeft, x.LastTargetID)
				}
			}
		})
	}
}

// TestGoneTargets: a user who blocks the bot makes its target gone: sends
// to it are refused with the reason and charged nothing; unblocking makes
// it active again. A group upgraded to a supergroup keeps its target at
// the new chat id.
func TestGoneTargets(t *testing.T) {
	l := newListener(t, "poll")
	tg := l.h.Telegram
	user := fake.TelegramChat{ID: 777, Type: "private", Name: "Ada"}
	c := l.code(t, "", 2)
	tg.Write(l.token, user, "/start "+c.Code)
	eventually(t, "the binding", func() bool { return len(l.targets(t)) == 1 })
	target := l.targets(t)[0]
	send := func() testkit.Response {
		return l.h.Call(t, "POST", "/openapi/v1/push/private", l.key, map[string]any{"botId": l.bot.ID, "target": fmt.Sprint(target.ID), "content": "hi"})
	}
	tg.BlockBot(l.token, user, true)
	eventually(t, "the target gone", func() bool { return l.targets(t)[0].Presence == push.PresenceGone })
	before := l.h.Balance(t, l.acct.ID)
	r := send()
	var e struct{ Error, Message string }
	r.Decode(t, &e)
	if r.Status != http.StatusBadRequest || e.Error != "target_gone" || !strings.Contains(e.Message, "blocked the bot") {
		t.Fatalf("a send to a gone target: %d %s", r.Status, r.Body)
	}
	if l.h.Balance(t, l.acct.ID) != before {
		t.Fatal("a refused send to a gone target was charged")
	}
	tg.BlockBot(l.token, user, false)
	eventually(t, "the target back", func() bool { return l.targets(t)[0].Presence == push.PresenceActive })
	if r := send(); r.Status != http.StatusOK {
		t.Fatalf("a send after the unblock: %d %s", r.Status, r.Body)
	}
	// A group upgraded to a supergroup: the target follows it.
	group := fake.TelegramChat{ID: -4000, Type: "group", Title: "ops"}
	tg.Membership(l.token, group, "member")
	tg.Write(l.token, group, "bind "+c.Code)
	eventually(t, "the group's binding", func() bool { return len(l.targets(t)) == 2 })
	tg.Upgrade(l.token, group, -1004000)
	eventually(t, "the group moved", func() bool {
		for _, x := range l.targets(t) {
			if x.Type == push.TargetGroup && x.Address == "-1004000" {
				return true
			}
		}
		return false
	})
}

// TestWebhookRefusesWhatDoesNotVerify: a push without the bot's secret
// token, or with a wrong one, or to an unknown bot, is refused with 401
// and nothing is stored; a push delivered twice is handled once.
func TestWebhookRefusesWhatDoesNotVerify(t *testing.T) {
	l := newListener(t, "webhook")
	tg := l.h.Telegram
	eventually(t, "the webhook set", func() bool { return tg.Webhook(l.token) != "" })
	c := l.code(t, "", 5)
	body, _ := json.Marshal(map[string]any{"update_id": 9, "message": map[string]any{"message_id": 1, "date": time.Now().Unix(),
		"chat": map[string]any{"id": 31337, "type": "private"}, "text": "/start " + c.Code}})
	path := fmt.Sprint("/hooks/", l.bot.ID)
	for _, tt := range []struct {
		name, path, secret string
	}{
		{"no secret", path, ""},
		{"wrong secret", path, strings.Repeat("a", 64)},
		{"unknown bot", "/hooks/9999", "x"},
		{"bad bot id", "/hooks/abc", "x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := l.h.Call(t, "POST", tt.path, "", string(body), "X-Telegram-Bot-Api-Secret-Token", tt.secret)
			if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "bad_signature") {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if n := len(l.targets(t)); n != 0 {
				t.Fatalf("%d targets bound by a push that does not verify", n)
			}
		})
	}
	// Delivered twice (Telegram retries a push it saw no answer to): one
	// target, one reply.
	secret := webhookSecretOf(t, l)
	for range 2 {
		r := l.h.Call(t, "POST", path, "", string(body), "X-Telegram-Bot-Api-Secret-Token", secret)
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	if n := len(l.targets(t)); n != 1 {
		t.Fatalf("%d targets after one update delivered twice, want 1", n)
	}
	codes, _ := l.h.Engine.BindCodes().List(context.Background(), push.System(), push.BindCodeFilter{BotID: l.bot.ID})
	if codes.Items[0].UsesLeft != 4 {
		t.Fatalf("%d uses left, want 4: the update was handled twice", codes.Items[0].UsesLeft)
	}
	// While the webhook is set, getUpdates is refused (Telegram's rule).
	resp, err := http.Post(tg.URL()+"/bot"+l.token+"/getUpdates", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("getUpdates with a webhook set: %d, want 409", resp.StatusCode)
	}
}

// webhookSecretOf reads the secret token the fake was given with the
// bot's webhook, as Telegram keeps it.
func webhookSecretOf(t *testing.T, l *listener) string {
	t.Helper()
	s := l.h.Telegram.WebhookSecret(l.token)
	if len(s) != 64 {
		t.Fatalf("secret token %q", s)
	}
	return s
}

// TestReceiverFailover: the bot's receiver runs on one node of two; when
// that node stops, the other takes it over within a few leases and goes
// on from the saved offset: no update is lost, none handled twice.
func TestReceiverFailover(t *testing.T) {
	db := t.TempDir() + "/failover.db"
	a := newListener(t, "poll", testkit.WithDB(db))
	b := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(a.h.Telegram))
	tg := a.h.Telegram
	c := a.code(t, "", 100)
	for i := range 5 {
		tg.Write(a.token, fake.TelegramChat{ID: int64(1000 + i), Type: "private"}, "bind "+c.Code)
	}
	eventually(t, "the first five bindings", func() bool { return len(a.targets(t)) == 5 })
	// Each confirmation is sent after its binding is stored; the node stops
	// once they are out (one it had not sent yet would go with it: the
	// other node sees the update as handled and does not reply again).
	confirmed := func(from, to int) func() bool {
		return func() bool {
			for i := from; i < to; i++ {
				if len(a.replies(int64(1000+i))) == 0 {
					return false
				}
			}
			return true
		}
	}
	eventually(t, "the first five confirmations", confirmed(0, 5))
	a.h.Stop()
	for i := 5; i < 10; i++ {
		tg.Write(a.token, fake.TelegramChat{ID: int64(1000 + i), Type: "private"}, "bind "+c.Code)
	}
	eventually(t, "the other node's bindings", func() bool {
		p, _ := b.Engine.Targets().List(context.Background(), push.System(), push.TargetFilter{BotID: a.bot.ID})
		return len(p.Items) == 10
	})
	codes, _ := b.Engine.BindCodes().List(context.Background(), push.System(), push.BindCodeFilter{BotID: a.bot.ID})
	if codes.Items[0].UsesLeft != 90 {
		t.Fatalf("%d uses left after 10 chats bound, want 90", codes.Items[0].UsesLeft)
	}
	eventually(t, "the other node's confirmations", confirmed(5, 10))
	time.Sleep(200 * time.Millisecond) // a second reply, if one were under way, arrives
	for i := range 10 {
		if n := len(a.replies(int64(1000 + i))); n != 1 {
			t.Errorf("chat %d got %d replies, want 1", 1000+i, n)
		}
	}
}
