package qq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// listener is a Herald with a QQ bot that hears its users in one mode,
// and the means to act as its users.
type listener struct {
	h             *testkit.Herald
	f             *fake.QQ
	acct          push.Account
	key           string
	bot           push.Bot
	appID, secret string
}

func newListener(t *testing.T, mode string, f *fake.QQ, opts ...testkit.Option) *listener {
	t.Helper()
	h := testkit.New(t, append([]testkit.Option{testkit.WithPoints(push.Points{Enabled: true, CostPerJob: 1})}, opts...)...)
	if f == nil {
		f = fake.NewQQ(t)
	}
	f.SetClock(h.Clock.Now)
	a := h.Account(t, "acme")
	l := &listener{h: h, f: f, acct: a, key: h.Key(t, a.ID)}
	l.appID, l.secret = f.NewApp()
	cfg := map[string]any{}
	_ = json.Unmarshal(f.BotConfig(l.appID, l.secret), &cfg)
	if mode != "" {
		cfg["receive"] = mode
	}
	l.bot = h.PlatformBot(t, a.ID, "qq", cfg)
	switch mode {
	case "webhook":
		if !f.SetCallback(l.appID, l.hookURL()) {
			t.Fatal("QQ's check of the webhook URL (op 13) failed")
		}
	default:
		eventually(t, "the gateway connection", func() bool { return f.Connected(l.appID) })
	}
	return l
}

func (l *listener) hookURL() string { return l.h.URL + fmt.Sprint("/hooks/", l.bot.ID) }

// code makes a bind code of the bot.
func (l *listener) code(t *testing.T, tt push.TargetType, uses int, ttl time.Duration) push.NewBindCode {
	t.Helper()
	c, err := l.h.Engine.BindCodes().Create(context.Background(), push.System(), push.BindCodeCreate{BotID: l.bot.ID, Type: tt, Uses: uses, TTL: ttl})
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

// replies returns the messages the bot sent to a chat.
func (l *listener) replies(chat string) []fake.QQMessage {
	var out []fake.QQMessage
	for _, m := range l.f.Messages() {
		if m.Target == chat && m.AppID == l.appID {
			out = append(out, m)
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

func (l *listener) targetAt(t *testing.T, addr string) push.Target {
	t.Helper()
	for _, x := range l.targets(t) {
		if x.Address == addr {
			return x
		}
	}
	return push.Target{}
}

// push sends text to a target through the HTTP API.
func (l *listener) push(t *testing.T, target push.Target, text string) testkit.Response {
	t.Helper()
	return l.h.Call(t, "POST", "/openapi/v1/push/private", l.key, map[string]any{"botId": l.bot.ID, "target": fmt.Sprint(target.ID), "content": text})
}

// usesLeft returns the uses left of the bot's codes, newest first.
func (l *listener) usesLeft(t *testing.T) []int {
	t.Helper()
	codes, err := l.h.Engine.BindCodes().List(context.Background(), push.System(), push.BindCodeFilter{BotID: l.bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, c := range codes.Items {
		out = append(out, c.UsesLeft)
	}
	return out
}

// TestBindByCode: in either mode, a user who sends "bind <code>" in a
// private chat becomes a user target of their openid, a group whose
// member sends it with the bot mentioned becomes a group target of its
// group_openid; the bot says so as a passive reply to that message; the
// code is spent; the same chat again keeps its target; a used, unknown,
// expired or wrong-type code binds nothing and is answered so.
func TestBindByCode(t *testing.T) {
	for _, mode := range []string{"gateway", "webhook"} {
		t.Run(mode, func(t *testing.T) {
			l := newListener(t, mode, nil)
			f := l.f
			c := l.code(t, "", 1, 0)
			if c.Command != "bind "+c.Code {
				t.Fatalf("command %q", c.Command)
			}
			msg := f.WriteC2C(l.appID, "USER1", "bind "+c.Code)
			eventually(t, "the user's binding", func() bool { return len(l.targets(t)) == 1 })
			got := l.targets(t)[0]
			if got.Type != push.TargetUser || got.Address != "USER1" || got.Presence != push.PresenceActive {
				t.Fatalf("bound %+v", got)
			}
			eventually(t, "the reply", func() bool { return len(l.replies("USER1")) == 1 })
			r := l.replies("USER1")[0]
			if r.Scene != "c2c" || r.MsgID != msg || r.MsgSeq != 1 || !strings.Contains(r.Content, fmt.Sprintf("target %d of %s", got.ID, l.bot.Name)) {
				t.Fatalf("reply %+v, want a passive reply to %s", r, msg)
			}
			// Again from the same chat: the same target, no use spent.
			msg2 := f.WriteC2C(l.appID, "USER1", "bind "+c.Code)
			eventually(t, "the second reply", func() bool { return len(l.replies("USER1")) == 2 })
			if r := l.replies("USER1")[1]; !strings.Contains(r.Content, "Already bound") || r.MsgID != msg2 || len(l.targets(t)) != 1 {
				t.Fatalf("second time: %+v, %d targets", r, len(l.targets(t)))
			}
			// The code is spent, another is unknown: another user gets nothing.
			f.WriteC2C(l.appID, "USER2", "bind "+c.Code)
			f.WriteC2C(l.appID, "USER2", "bind NOTACODE")
			eventually(t, "the refusals", func() bool { return len(l.replies("USER2")) == 2 })
			for _, r := range l.replies("USER2") {
				if !strings.Contains(r.Content, "unknown, used or expired") || r.MsgSeq != 1 {
					t.Fatalf("refusal %+v", r)
				}
			}
			// An expired code binds nothing.
			old := l.code(t, "", 1, time.Minute)
			l.h.Clock.Advance(2 * time.Minute)
			f.WriteC2C(l.appID, "USER3", "bind "+old.Code)
			eventually(t, "the expired code's refusal", func() bool { return len(l.replies("USER3")) == 1 })
			if r := l.replies("USER3")[0]; !strings.Contains(r.Content, "unknown, used or expired") {
				t.Fatalf("expired code: %+v", r)
			}
			// A group code: a private chat is the wrong type; a group binds.
			gc := l.code(t, push.TargetGroup, 1, 0)
			f.WriteC2C(l.appID, "USER4", "bind "+gc.Code)
			eventually(t, "the wrong-type reply", func() bool { return len(l.replies("USER4")) == 1 })
			gmsg := f.WriteGroup(l.appID, "GROUP1", "MEMBER1", "bind "+gc.Code)
			eventually(t, "the group's binding", func() bool { return len(l.targets(t)) == 2 })
			g := l.targetAt(t, "GROUP1")
			if g.Type != push.TargetGroup {
				t.Fatalf("group target %+v", g)
			}
			eventually(t, "the group's reply", func() bool { return len(l.replies("GROUP1")) == 1 })
			if r := l.replies("GROUP1")[0]; r.Scene != "group" || r.MsgID != gmsg || r.MsgSeq != 1 {
				t.Fatalf("group reply %+v", r)
			}
			if n := len(l.targets(t)); n != 2 {
				t.Fatalf("%d targets, want 2", n)
			}
			// Pushes to the bound targets go as the next replies.
			for _, target := range []push.Target{got, g} {
				if r := l.push(t, target, "hello"); r.Status != http.StatusOK {
					t.Fatalf("push to %s: %d %s", target.Address, r.Status, r.Body)
				}
			}
			if r := l.replies("GROUP1"); r[len(r)-1].MsgID != gmsg || r[len(r)-1].MsgSeq != 2 {
				t.Fatalf("group push %+v, want msg_seq 2 of %s", r[len(r)-1], gmsg)
			}
			if mode == "webhook" {
				statuses, acks := f.WebhookAnswers(l.appID)
				for i := range statuses {
					if statuses[i] != http.StatusOK || acks[i] != "0" {
						t.Fatalf("the webhook answered push %d with %d, d=%s; want 200 and op 12 d=0", i, statuses[i], acks[i])
					}
				}
				if len(statuses) != 7 {
					t.Fatalf("%d pushes answered, want 7", len(statuses))
				}
			}
			for i, left := range l.usesLeft(t) {
				if i != 1 && left != 0 { // the expired code was never used
					t.Errorf("code %d: %d uses left, want spent", i, left)
				}
			}
		})
	}
}

// TestReplyWindows: a push to a user who wrote 10 minutes ago goes as a
// passive reply to that message with the next msg_seq, and QQ (the fake)
// takes it; after QQ's 60 minutes it is refused before charging, with
// when the user last wrote and what to do; a group's window is 5
// minutes; a message takes 5 replies at most. The bot's status counts
// the targets reachable now.
func TestReplyWindows(t *testing.T) {
	l := newListener(t, "gateway", nil)
	f := l.f
	c := l.code(t, "", 2, 0)
	f.WriteC2C(l.appID, "USERW", "bind "+c.Code)
	gmsg := f.WriteGroup(l.appID, "GROUPW", "M1", "bind "+c.Code)
	eventually(t, "the bindings", func() bool { return len(l.replies("USERW")) == 1 && len(l.replies("GROUPW")) == 1 })
	user, group := l.targetAt(t, "USERW"), l.targetAt(t, "GROUPW")
	status := func() push.ReceiverStatus {
		st, err := l.h.Engine.Events().Status(context.Background(), push.System(), l.bot.ID)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(); st.Targets != 2 || st.Reachable != 2 || st.Mode != push.ReceiveOutbound || !st.Running {
		t.Fatalf("status %+v, want 2 targets reachable", st)
	}
	hello := f.WriteC2C(l.appID, "USERW", "hello")
	eventually(t, "the message noted", func() bool {
		r := l.push(t, user, "first") // the first push after it answers it
		if r.Status != http.StatusOK {
			t.Fatalf("push: %d %s", r.Status, r.Body)
		}
		last := l.replies("USERW")
		return last[len(last)-1].MsgID == hello
	})
	// Within the group's 5 minutes: the next reply to the group's message.
	if r := l.push(t, group, "group now"); r.Status != http.StatusOK {
		t.Fatalf("group push: %d %s", r.Status, r.Body)
	}
	if g := l.replies("GROUPW"); g[len(g)-1].MsgID != gmsg || g[len(g)-1].MsgSeq != 2 {
		t.Fatalf("group push went as %+v, want msg_seq 2 of %s", g[len(g)-1], gmsg)
	}
	l.h.Clock.Advance(10 * time.Minute)
	if r := l.push(t, user, "ten minutes later"); r.Status != http.StatusOK {
		t.Fatalf("push 10 minutes later: %d %s", r.Status, r.Body)
	}
	last := l.replies("USERW")
	if m := last[len(last)-1]; m.MsgID != hello || m.MsgSeq != 2 || m.Content != "ten minutes later" {
		t.Fatalf("the push went as %+v, want msg_seq 2 of %s", m, hello)
	}
	// The group's 5 minutes are over.
	before := l.h.Balance(t, l.acct.ID)
	r := l.push(t, group, "too late")
	var e struct{ Error, Message string }
	r.Decode(t, &e)
	if r.Status != http.StatusBadRequest || e.Error != "no_reply_window" || !strings.Contains(e.Message, "5m0s") {
		t.Fatalf("group push after 10 minutes: %d %s", r.Status, r.Body)
	}
	if l.h.Balance(t, l.acct.ID) != before {
		t.Fatal("a group push refused for its window was charged")
	}
	if st := status(); st.Reachable != 1 {
		t.Fatalf("status %+v, want 1 reachable", st)
	}
	// Three more replies to the user's message, then the sixth is refused.
	for i := 3; i <= 5; i++ {
		if r := l.push(t, user, "reply "+strconv.Itoa(i)); r.Status != http.StatusOK {
			t.Fatalf("reply %d: %d %s", i, r.Status, r.Body)
		}
	}
	r = l.push(t, user, "sixth")
	r.Decode(t, &e)
	if r.Status != http.StatusBadRequest || e.Error != "no_reply_window" || !strings.Contains(e.Message, "all the 5 replies") {
		t.Fatalf("sixth reply: %d %s", r.Status, r.Body)
	}
	// After the window: refused with when the user last wrote, charged nothing.
	f.WriteC2C(l.appID, "USERW", "again")
	eventually(t, "the new message noted", func() bool { return status().Reachable == 1 })
	l.h.Clock.Advance(65 * time.Minute)
	before = l.h.Balance(t, l.acct.ID)
	sent := len(f.Messages())
	r = l.push(t, user, "too late")
	r.Decode(t, &e)
	if r.Status != http.StatusBadRequest || e.Error != "no_reply_window" || !strings.Contains(e.Message, "last wrote at") ||
		!strings.Contains(e.Message, "1h5m0s ago") || !strings.Contains(e.Message, "ask the user to write to the bot") {
		t.Fatalf("push after the window: %d %s", r.Status, r.Body)
	}
	if l.h.Balance(t, l.acct.ID) != before || len(f.Messages()) != sent {
		t.Fatal("a push refused for its window was charged or sent")
	}
	if st := status(); st.Reachable != 0 {
		t.Fatalf("status %+v, want none reachable", st)
	}
}

// TestGoneTargets: a user who deletes the bot (FRIEND_DEL) or turns its
// messages off makes the target gone: pushes are refused with the reason,
// charged nothing; adding it again makes it active, and the push goes as
// a reply to the FRIEND_ADD event (event_id). The same for a group.
func TestGoneTargets(t *testing.T) {
	for _, mode := range []string{"gateway", "webhook"} {
		t.Run(mode, func(t *testing.T) {
			l := newListener(t, mode, nil)
			f := l.f
			c := l.code(t, "", 2, 0)
			f.WriteC2C(l.appID, "USERG", "bind "+c.Code)
			f.WriteGroup(l.appID, "GROUPG", "M", "bind "+c.Code)
			eventually(t, "the bindings", func() bool { return len(l.targets(t)) == 2 })
			for _, tc := range []struct {
				addr, leave, back, why string
				event                  func(addr, t string) string
			}{
				{"USERG", "FRIEND_DEL", "FRIEND_ADD", "removed the bot from its friends", func(a, e string) string { return f.UserEvent(l.appID, a, e) }},
				{"USERG", "C2C_MSG_REJECT", "C2C_MSG_RECEIVE", "turned the bot's messages off", func(a, e string) string { return f.UserEvent(l.appID, a, e) }},
				{"GROUPG", "GROUP_DEL_ROBOT", "GROUP_ADD_ROBOT", "removed the bot from the group", func(a, e string) string { return f.GroupEvent(l.appID, a, e) }},
				{"GROUPG", "GROUP_MSG_REJECT", "GROUP_MSG_RECEIVE", "turned the bot's messages in the group off", func(a, e string) string { return f.GroupEvent(l.appID, a, e) }},
			} {
				// Past every message's window: only the event can be replied to.
				l.h.Clock.Advance(61 * time.Minute)
				tc.event(tc.addr, tc.leave)
				eventually(t, tc.leave, func() bool { return l.targetAt(t, tc.addr).Presence == push.PresenceGone })
				before := l.h.Balance(t, l.acct.ID)
				r := l.push(t, l.targetAt(t, tc.addr), "hi")
				var e struct{ Error, Message string }
				r.Decode(t, &e)
				if r.Status != http.StatusBadRequest || e.Error != "target_gone" || !strings.Contains(e.Message, tc.why) {
					t.Fatalf("%s: a push to a gone target: %d %s", tc.leave, r.Status, r.Body)
				}
				if l.h.Balance(t, l.acct.ID) != before {
					t.Fatalf("%s: a refused push was charged", tc.leave)
				}
				id := tc.event(tc.addr, tc.back)
				eventually(t, tc.back, func() bool { return l.targetAt(t, tc.addr).Presence == push.PresenceActive })
				var m fake.QQMessage
				eventually(t, tc.back+" noted", func() bool {
					r := l.push(t, l.targetAt(t, tc.addr), "welcome back")
					if r.Status != http.StatusOK {
						return false
					}
					last := l.replies(tc.addr)
					m = last[len(last)-1]
					return true
				})
				if m.EventID != id || m.MsgID != "" || m.MsgSeq != 1 {
					t.Fatalf("%s: the push went as %+v, want a reply to event %s", tc.back, m, id)
				}
			}
		})
	}
}

// TestWebhookRefusesWhatDoesNotVerify: a push with no signature, a wrong
// one, one signed with another secret, one replayed with an old (or
// future) timestamp, or one to an unknown bot is refused with 401 and
// nothing is stored; a verified push delivered twice is handled once.
func TestWebhookRefusesWhatDoesNotVerify(t *testing.T) {
	l := newListener(t, "webhook", nil)
	c := l.code(t, "", 5, 0)
	body, _ := json.Marshal(map[string]any{"op": 0, "id": "C2C_MESSAGE_CREATE:1", "t": "C2C_MESSAGE_CREATE", "s": 1,
		"d": map[string]any{"id": "ROBOT1.0_x1", "content": "bind " + c.Code, "timestamp": time.Now().Format(time.RFC3339),
			"author": map[string]any{"user_openid": "FORGED"}}})
	now := l.h.Clock.Now()
	ts := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	path := fmt.Sprint("/hooks/", l.bot.ID)
	good := ts(0)
	for _, tc := range []struct {
		name, path, ts, sig string
	}{
		{"no signature", path, good, ""},
		{"wrong signature", path, good, strings.Repeat("ab", 64)},
		{"another secret", path, good, fake.QQSignature("another-secret-of-the-right-size", good, body)},
		{"signature of another body", path, good, fake.QQSignature(l.secret, good, []byte("{}"))},
		{"replayed old timestamp", path, ts(-6 * time.Minute), fake.QQSignature(l.secret, ts(-6*time.Minute), body)},
		{"timestamp in the future", path, ts(6 * time.Minute), fake.QQSignature(l.secret, ts(6*time.Minute), body)},
		{"unknown bot", "/hooks/9999", good, fake.QQSignature(l.secret, good, body)},
		{"bad bot id", "/hooks/abc", good, fake.QQSignature(l.secret, good, body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := l.h.Call(t, "POST", tc.path, "", string(body), "X-Signature-Timestamp", tc.ts, "X-Signature-Ed25519", tc.sig)
			if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "bad_signature") {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if n := len(l.targets(t)); n != 0 {
				t.Fatalf("%d targets bound by a push that does not verify", n)
			}
		})
	}
	// Delivered twice: one target, one use spent.
	f := l.f
	f.AddUser("FORGED")
	for range 2 {
		r := l.h.Call(t, "POST", path, "", string(body), "X-Signature-Timestamp", good, "X-Signature-Ed25519", fake.QQSignature(l.secret, good, body))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"op":12`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	if n := len(l.targets(t)); n != 1 {
		t.Fatalf("%d targets after one event delivered twice, want 1", n)
	}
	if left := l.usesLeft(t); left[0] != 4 {
		t.Fatalf("%d uses left, want 4: the event was handled twice", left[0])
	}
}

// TestGatewayResume: the gateway drops the connection in the middle of a
// stream of events; the receiver resumes its session from the last seq it
// handled, and every event is handled once: no binding lost, none twice.
func TestGatewayResume(t *testing.T) {
	l := newListener(t, "gateway", nil)
	f := l.f
	c := l.code(t, "", 100, 0)
	f.DropAfter(l.appID, 3)
	for i := range 8 {
		f.WriteC2C(l.appID, fmt.Sprint("RESUME", i), "bind "+c.Code)
	}
	eventually(t, "eight bindings", func() bool { return len(l.targets(t)) == 8 })
	identifies, resumes := f.GatewaySessions(l.appID)
	if identifies != 1 || resumes < 1 {
		t.Fatalf("%d identifies, %d resumes; want 1 and at least 1", identifies, resumes)
	}
	eventually(t, "eight replies", func() bool { return len(l.f.Messages()) == 8 })
	for i := range 8 {
		if n := len(l.replies(fmt.Sprint("RESUME", i))); n != 1 {
			t.Errorf("user %d got %d replies, want 1", i, n)
		}
	}
	if left := l.usesLeft(t); left[0] != 92 {
		t.Fatalf("%d uses left after 8 bindings, want 92", left[0])
	}
}

// TestGatewayHeartbeats: the fake gateway says hello with its interval,
// and closes a connection that identifies but sends no heartbeat with
// 4009, as QQ does; a bad token is closed with 4004.
func TestGatewayHeartbeats(t *testing.T) {
	f := fake.NewQQ(t)
	f.SetHeartbeat(100 * time.Millisecond)
	appID, secret := f.NewApp()
	token := qqToken(t, f, appID, secret)
	for _, tc := range []struct {
		name, token string
		want        websocket.StatusCode
	}{
		{"no heartbeat", token, 4009},
		{"bad token", "nope", 4004},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, strings.Replace(f.URL(), "http", "ws", 1)+"/websocket", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			_, hello, err := conn.Read(ctx)
			if err != nil || !strings.Contains(string(hello), `"heartbeat_interval":100`) {
				t.Fatalf("hello %s, %v", hello, err)
			}
			id, _ := json.Marshal(map[string]any{"op": 2, "d": map[string]any{"token": "QQBot " + tc.token, "intents": 1 << 25, "shard": []int{0, 1}}})
			if err := conn.Write(ctx, websocket.MessageText, id); err != nil {
				t.Fatal(err)
			}
			for {
				_, _, err := conn.Read(ctx)
				if err != nil {
					if got := websocket.CloseStatus(err); got != tc.want {
						t.Fatalf("closed with %d (%v), want %d", got, err, tc.want)
					}
					return
				}
			}
		})
	}
}

// qqToken gets an access token from the fake as a bot does.
func qqToken(t *testing.T, f *fake.QQ, appID, secret string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"appId": appID, "clientSecret": secret})
	resp, err := http.Post(f.URL()+"/app/getAppAccessToken", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || ans.AccessToken == "" {
		t.Fatalf("token: %v", err)
	}
	return ans.AccessToken
}

// TestReceiverFailover: the bot's gateway receiver runs on one node of
// two; when that node stops, the other takes it over within a few leases
// and resumes the saved session: no event lost, none handled twice.
func TestReceiverFailover(t *testing.T) {
	db := t.TempDir() + "/failover.db"
	a := newListener(t, "gateway", nil, testkit.WithDB(db))
	b := testkit.New(t, testkit.WithDB(db))
	f := a.f
	c := a.code(t, "", 100, 0)
	for i := range 5 {
		f.WriteC2C(a.appID, fmt.Sprint("FAIL", i), "bind "+c.Code)
	}
	eventually(t, "the first five bindings", func() bool { return len(a.targets(t)) == 5 && len(f.Messages()) == 5 })
	a.h.Stop()
	for i := 5; i < 10; i++ {
		f.WriteC2C(a.appID, fmt.Sprint("FAIL", i), "bind "+c.Code)
	}
	eventually(t, "the other node's bindings", func() bool {
		p, _ := b.Engine.Targets().List(context.Background(), push.System(), push.TargetFilter{BotID: a.bot.ID})
		return len(p.Items) == 10
	})
	eventually(t, "ten replies", func() bool { return len(f.Messages()) == 10 })
	codes, _ := b.Engine.BindCodes().List(context.Background(), push.System(), push.BindCodeFilter{BotID: a.bot.ID})
	if codes.Items[0].UsesLeft != 90 {
		t.Fatalf("%d uses left after 10 chats bound, want 90", codes.Items[0].UsesLeft)
	}
	for i := range 10 {
		if n := len(a.replies(fmt.Sprint("FAIL", i))); n != 1 {
			t.Errorf("user %d got %d replies, want 1", i, n)
		}
	}
	if _, resumes := f.GatewaySessions(a.appID); resumes < 1 {
		t.Fatal("the second node identified anew instead of resuming the saved session")
	}
}

// TestGatewaySessionRules: the receiver keeps its connection with
// heartbeats on the gateway's interval (the fake closes a silent one);
// when the gateway ended the session, the resume is refused (op 9) and
// the receiver identifies anew, and events go on.
func TestGatewaySessionRules(t *testing.T) {
	f := fake.NewQQ(t)
	f.SetHeartbeat(100 * time.Millisecond)
	l := newListener(t, "gateway", f)
	time.Sleep(time.Second) // ten intervals
	if identifies, resumes := f.GatewaySessions(l.appID); identifies != 1 || resumes != 0 || !f.Connected(l.appID) {
		t.Fatalf("%d identifies, %d resumes, connected %v: the receiver lost its connection without a drop", identifies, resumes, f.Connected(l.appID))
	}
	f.EndSession(l.appID)
	eventually(t, "a new identify", func() bool {
		identifies, resumes := f.GatewaySessions(l.appID)
		return identifies == 2 && resumes == 0 && f.Connected(l.appID)
	})
	c := l.code(t, "", 1, 0)
	f.WriteC2C(l.appID, "AFTER", "bind "+c.Code)
	eventually(t, "the binding in the new session", func() bool { return len(l.targets(t)) == 1 })
}

// TestFakeReplyRules: the fake's message endpoint judges passive replies
// as QQ does, so that the tests above can fail: a reply to an unknown
// message, one repeating a msg_seq, a sixth one and one after the
// window are refused with QQ's codes.
func TestFakeReplyRules(t *testing.T) {
	f := fake.NewQQ(t)
	clock := &testkit.Clock{}
	f.SetClock(clock.Now)
	appID, secret := f.NewApp()
	token := qqToken(t, f, appID, secret)
	msg := f.WriteC2C(appID, "U1", "hi")
	send := func(body map[string]any) int {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", f.URL()+"/v2/users/U1/messages", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "QQBot "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans struct {
			Code int `json:"code"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&ans)
		return ans.Code
	}
	reply := func(id string, seq int) map[string]any {
		return map[string]any{"msg_type": 0, "content": "x", "msg_id": id, "msg_seq": seq}
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want int
	}{
		{"no reply id: proactive, not permitted", map[string]any{"msg_type": 0, "content": "x"}, 40034102},
		{"unknown msg_id", reply("ROBOT1.0_unknown", 1), 304026},
		{"first reply", reply(msg, 1), 0},
		{"msg_seq repeated", reply(msg, 1), 40054005},
		{"second to fifth", reply(msg, 2), 0},
		{"third", reply(msg, 3), 0},
		{"fourth", reply(msg, 4), 0},
		{"fifth", reply(msg, 5), 0},
		{"sixth", reply(msg, 6), 22009},
	} {
		if got := send(tc.body); got != tc.want {
			t.Fatalf("%s: code %d, want %d", tc.name, got, tc.want)
		}
	}
	late := f.WriteC2C(appID, "U1", "again")
	clock.Advance(61 * time.Minute)
	if got := send(reply(late, 1)); got != 304027 {
		t.Fatalf("a reply after 61 minutes: code %d, want 304027", got)
	}
}
