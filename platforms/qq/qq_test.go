package qq_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

// env is a Herald in memory with one QQ bot on a fake QQ.
type env struct {
	*testkit.PlatformEnv
	f             *fake.QQ
	bot           push.Bot
	appID, secret string
	seq           int
	lastMsg       string // the id of the message a user wrote last
}

// newEnv makes the bot take QQ's events by webhook: the fake's pushes are
// answered before they return, so a user's message is known to Herald
// (and a push may reply to it) as soon as the fake emitted it.
func newEnv(t *testing.T, opts ...testkit.Option) *env {
	t.Helper()
	e := &env{PlatformEnv: testkit.NewPlatformEnv(t, "qq", opts...), f: fake.NewQQ(t)}
	e.appID, e.secret = e.f.NewApp()
	e.bot = e.Bot(t, e.f.BotConfig(e.appID, e.secret), map[string]any{"receive": "webhook"})
	if !e.f.SetCallback(e.appID, e.H.URL+"/hooks/"+strconv.FormatInt(e.bot.ID, 10)) {
		t.Fatal("QQ's check of the webhook URL failed")
	}
	return e
}

// talk makes the target's user (or a group member) write to the bot: the
// message a push replies to, since QQ takes replies only.
func (e *env) talk(tg push.Target) {
	if tg.Type == push.TargetGroup {
		e.lastMsg = e.f.WriteGroup(e.appID, tg.Address, "MEMBER", "hi")
		return
	}
	e.lastMsg = e.f.WriteC2C(e.appID, tg.Address, "hi")
}

// target binds a fresh user or group known to the fake.
func (e *env) target(t *testing.T, tt push.TargetType) push.Target {
	t.Helper()
	e.seq++
	addr := strings.ToUpper(fake.SHA256([]byte{byte(e.seq), byte(len(tt))})[:32])
	if tt == push.TargetGroup {
		e.f.AddGroup(addr)
	} else {
		e.f.AddUser(addr)
	}
	return e.Target(t, e.bot, tt, addr)
}

// send makes the user write (but for a wake-up message, which is no
// reply), sends m and waits for the job to settle.
func (e *env) send(t *testing.T, tg push.Target, m push.Message) push.Job {
	t.Helper()
	if !m.Wakeup {
		e.talk(tg)
	}
	return e.Send(t, e.bot, tg, m)
}

func text(s string) push.Message     { return push.Message{Type: push.MsgTypeText, Content: s} }
func markdown(s string) push.Message { return push.Message{Type: push.MsgTypeMarkdown, Content: s} }

func TestSendFormats(t *testing.T) {
	e := newEnv(t)
	images := fake.NewImages(t)
	png := fake.PNG(1)
	jpg := fake.JPEG(2)
	pngURL := images.Add("/a.png", png, "image/png")
	jpgURL := images.Add("/b.jpg", jpg, "image/jpeg")

	tests := []struct {
		name    string
		tt      push.TargetType
		msg     push.Message
		talked  bool
		want    fake.QQMessage
		wantSHA string
	}{
		{name: "text to a user", tt: push.TargetUser, msg: text("hello qq"),
			want: fake.QQMessage{Scene: "c2c", MsgType: 0, Content: "hello qq"}},
		{name: "markdown to a user", tt: push.TargetUser, msg: markdown("# t\n**b**"),
			want: fake.QQMessage{Scene: "c2c", MsgType: 2, Markdown: "# t\n**b**"}},
		{name: "image to a user", tt: push.TargetUser, msg: push.Message{Type: push.MsgTypeImage, ImageURL: pngURL},
			want: fake.QQMessage{Scene: "c2c", MsgType: 7, Content: " "}, wantSHA: fake.SHA256(png)},
		{name: "image with a caption to a user", tt: push.TargetUser, msg: push.Message{Type: push.MsgTypeImage, ImageURL: jpgURL, Content: "today's chart"},
			want: fake.QQMessage{Scene: "c2c", MsgType: 7, Content: "today's chart"}, wantSHA: fake.SHA256(jpg)},
		{name: "text to a group", tt: push.TargetGroup, msg: text("hello group"),
			want: fake.QQMessage{Scene: "group", MsgType: 0, Content: "hello group"}},
		{name: "markdown to a group", tt: push.TargetGroup, msg: markdown("- a\n- b"),
			want: fake.QQMessage{Scene: "group", MsgType: 2, Markdown: "- a\n- b"}},
		{name: "image to a group", tt: push.TargetGroup, msg: push.Message{Type: push.MsgTypeImage, ImageURL: pngURL},
			want: fake.QQMessage{Scene: "group", MsgType: 7, Content: " "}, wantSHA: fake.SHA256(png)},
		{name: "wake-up text to a user", tt: push.TargetUser, msg: push.Message{Type: push.MsgTypeText, Content: "wake up", Wakeup: true}, talked: true,
			want: fake.QQMessage{Scene: "c2c", MsgType: 0, Content: "wake up", IsWakeup: true}},
		{name: "wake-up markdown to a user", tt: push.TargetUser, msg: push.Message{Type: push.MsgTypeMarkdown, Content: "**up**", Wakeup: true}, talked: true,
			want: fake.QQMessage{Scene: "c2c", MsgType: 2, Markdown: "**up**", IsWakeup: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := e.target(t, tc.tt)
			if tc.talked {
				e.f.UserTalked(tg.Address)
			}
			before := len(e.f.Messages())
			j := e.send(t, tg, tc.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			msgs := e.f.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("fake accepted %d messages, want %d", len(msgs), before+1)
			}
			got := msgs[len(msgs)-1]
			want := tc.want
			want.AppID, want.Target = e.appID, tg.Address
			if !tc.msg.Wakeup {
				want.MsgID, want.MsgSeq = e.lastMsg, 1 // a passive reply to the user's message
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(fake.QQMessage{}, "ID", "At", "Media")); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if j.PlatformIndex != got.ID || !strings.HasPrefix(got.ID, "ROBOT1.0_") {
				t.Errorf("platformIndex %q, want the message id %q", j.PlatformIndex, got.ID)
			}
			if tc.wantSHA != "" {
				if got.Media == nil {
					t.Fatal("media message without its upload")
				}
				if got.Media.SHA256 != tc.wantSHA || got.Media.FileType != 1 || got.Media.SrvSendMsg || got.Media.URL != tc.msg.ImageURL {
					t.Errorf("upload %+v, want file_type 1, srv_send_msg false, sha %s of %s", *got.Media, tc.wantSHA, tc.msg.ImageURL)
				}
			}
		})
	}
}

func TestDeliveryPolicy(t *testing.T) {
	e := newEnv(t, testkit.WithPoints(push.Points{Enabled: true, CostPerJob: 1})) // no proactive permission, as QQ grants none since 2025-04-21
	tests := []struct {
		name     string
		tt       push.TargetType
		wakeup   bool
		talked   bool
		refused  bool // before charging, by Herald: QQ would refuse it
		state    push.State
		contains []string
	}{
		{name: "a push to a user who never wrote is refused before charging", tt: push.TargetUser, refused: true,
			contains: []string{"never written to the bot", "only as replies", "ask the user to write to the bot"}},
		{name: "wake-up without the user's message is refused", tt: push.TargetUser, wakeup: true, state: push.StateFailed,
			contains: []string{"40034102", "wake-up", "after talking to the bot"}},
		{name: "wake-up after the user's message goes", tt: push.TargetUser, wakeup: true, talked: true, state: push.StateSucceeded},
		{name: "a push to a group no member wrote in is refused before charging", tt: push.TargetGroup, refused: true,
			contains: []string{"never written to the bot", "within 5m0s of a message"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := e.target(t, tc.tt)
			if tc.talked {
				e.f.UserTalked(tg.Address)
			}
			m := push.Message{Type: push.MsgTypeText, Content: "hi", Wakeup: tc.wakeup}
			if tc.refused {
				before, sent := e.H.Balance(t, e.Account.ID), e.f.Requests("messages")
				_, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: e.bot.ID, TargetID: tg.ID, Message: m})
				if !push.IsKind(err, push.Invalid) || push.ReasonOf(err) != "no_reply_window" {
					t.Fatalf("send = %v, want Invalid no_reply_window", err)
				}
				for _, s := range tc.contains {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("refusal %q lacks %q", err, s)
					}
				}
				if e.H.Balance(t, e.Account.ID) != before || e.f.Requests("messages") != sent {
					t.Fatal("a refused push was charged or sent")
				}
				return
			}
			j := e.send(t, tg, m)
			if j.State != tc.state {
				t.Fatalf("job %s (%s), want %s", j.State, j.Error, tc.state)
			}
			for _, s := range tc.contains {
				if !strings.Contains(j.Error, s) {
					t.Errorf("job error %q lacks %q", j.Error, s)
				}
			}
		})
	}
	// A second wake-up message after one user message is refused: QQ
	// allows one per window.
	tg := e.target(t, push.TargetUser)
	e.f.UserTalked(tg.Address)
	if j := e.send(t, tg, push.Message{Type: push.MsgTypeText, Content: "1", Wakeup: true}); j.State != push.StateSucceeded {
		t.Fatalf("first wake-up: %s %s", j.State, j.Error)
	}
	if j := e.send(t, tg, push.Message{Type: push.MsgTypeText, Content: "2", Wakeup: true}); j.State != push.StateFailed || !strings.Contains(j.Error, "40034102") {
		t.Fatalf("second wake-up: %s %s, want failed with 40034102", j.State, j.Error)
	}
}

func TestGroupWakeupRefusedBeforeCharging(t *testing.T) {
	e := newEnv(t, testkit.WithPoints(push.Points{Enabled: true}))
	tg := e.target(t, push.TargetGroup)
	before := e.H.Balance(t, e.Account.ID)
	_, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: e.bot.ID, TargetID: tg.ID,
		Message: push.Message{Type: push.MsgTypeText, Content: "hi", Wakeup: true}})
	if !push.IsKind(err, push.Invalid) || push.ReasonOf(err) != "wakeup_unsupported" || !strings.Contains(err.Error(), "only to users") {
		t.Fatalf("group wake-up = %v, want Invalid wakeup_unsupported", err)
	}
	if after := e.H.Balance(t, e.Account.ID); after != before || e.H.CountJobs(t) != 0 || e.f.Requests("messages") != 0 {
		t.Fatalf("refused send charged %d points, made %d jobs, %d requests", before-after, e.H.CountJobs(t), e.f.Requests("messages"))
	}
}

func TestMarkdownFallback(t *testing.T) {
	tests := []struct {
		name      string
		granted   bool
		faults    []fake.QQFault
		state     push.State
		requests  int
		want      *fake.QQMessage
		errSubstr string
	}{
		{name: "granted: native markdown", granted: true, state: push.StateSucceeded, requests: 1,
			want: &fake.QQMessage{MsgType: 2, Markdown: "# Deploy\n**api** is [live](https://example.com/d)"}},
		{name: "not granted: one plain-text resend", granted: false, state: push.StateSucceeded, requests: 2,
			want: &fake.QQMessage{MsgType: 0, Content: "Deploy\n\napi is live (https://example.com/d)"}},
		{name: "the fallback is refused too: no third send", granted: true, state: push.StateFailed, requests: 2,
			faults: []fake.QQFault{
				{Status: 400, Code: 50056, Message: "不允许发送 markdown content"},
				{Status: 400, Code: 304003, Message: "URL_NOT_ALLOWED url 未报备"},
			}, errSubstr: "304003"},
		{name: "other markdown refusals do not fall back", granted: true, state: push.StateFailed, requests: 1,
			faults:    []fake.QQFault{{Status: 400, Code: 50055, Message: "无效的 markdown content"}},
			errSubstr: "50055"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.f.SetMarkdown(e.appID, tc.granted)
			e.f.Fail(tc.faults...)
			tg := e.target(t, push.TargetUser)
			j := e.send(t, tg, markdown("# Deploy\n**api** is [live](https://example.com/d)"))
			if j.State != tc.state || !strings.Contains(j.Error, tc.errSubstr) {
				t.Fatalf("job %s %q, want %s containing %q", j.State, j.Error, tc.state, tc.errSubstr)
			}
			if n := e.f.Requests("messages"); n != tc.requests {
				t.Errorf("%d message requests, want %d", n, tc.requests)
			}
			if tc.want != nil {
				msgs := e.f.Messages()
				if len(msgs) != 1 {
					t.Fatalf("fake accepted %d messages, want 1", len(msgs))
				}
				if diff := cmp.Diff(*tc.want, msgs[0], cmpopts.IgnoreFields(fake.QQMessage{}, "AppID", "Scene", "Target", "ID", "At", "MsgID", "MsgSeq")); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	images := fake.NewImages(t)
	png := fake.PNG(3)
	imgURL := images.Add("/c.png", png, "image/png")
	tests := []struct {
		name     string
		msg      push.Message
		faults   []fake.QQFault
		drop     string // endpoint whose next request is dropped after reading
		limits   push.Limits
		delay    time.Duration
		state    push.State
		messages int // requests to /messages
		files    int // requests to /files
		contains []string
	}{
		{name: "definitive: URL not registered", msg: text("see https://x.example"),
			faults: []fake.QQFault{{Status: 400, Code: 304003, Message: "URL_NOT_ALLOWED url 未报备"}},
			state:  push.StateFailed, messages: 1, contains: []string{"304003", "url 未报备", "not registered"}},
		{name: "definitive: too long", msg: text("long"),
			faults: []fake.QQFault{{Status: 400, Code: 40054007, Message: "消息长度超限"}},
			state:  push.StateFailed, messages: 1, contains: []string{"40054007", "消息长度超限"}},
		{name: "definitive: banned", msg: text("x"),
			faults: []fake.QQFault{{Status: 403, Code: 11254, Message: "ErrorInterfaceForbidden"}},
			state:  push.StateFailed, messages: 1, contains: []string{"11254", "banned"}},
		{name: "definitive: a gateway's 4xx page", msg: text("x"),
			faults: []fake.QQFault{{Status: 404, HTML: true}},
			state:  push.StateFailed, messages: 1, contains: []string{"404", "not the QQ API's"}},
		{name: "retryable: rate limit then delivered", msg: text("x"),
			faults: []fake.QQFault{{Status: 400, Code: 22009, Message: "msg limit exceed"}},
			state:  push.StateSucceeded, messages: 2},
		{name: "retryable: HTTP 429 then delivered", msg: text("x"),
			faults: []fake.QQFault{{Status: 429, Code: 429, Message: "too many requests"}},
			state:  push.StateSucceeded, messages: 2},
		{name: "retryable: system check failed then delivered", msg: text("x"),
			faults: []fake.QQFault{{Status: 500, Code: 11252, Message: "ErrorCheckAppPrivilegeFailed"}},
			state:  push.StateSucceeded, messages: 2},
		{name: "retryable: media fetch failed then delivered", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL},
			faults: []fake.QQFault{{On: "files", Status: 400, Code: 304082, Message: "富媒体资源拉取失败，请重试"}},
			state:  push.StateSucceeded, messages: 1, files: 2},
		{name: "retryable: upload answer lost then delivered", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL},
			drop: "files", state: push.StateSucceeded, messages: 1, files: 2},
		{name: "uncertain: 500 with an error code", msg: text("x"),
			faults: []fake.QQFault{{Status: 500, Code: 1100300, Message: "系统内部错误"}},
			state:  push.StateUncertain, messages: 1, contains: []string{"1100300", "may have processed"}},
		{name: "uncertain: a gateway's 502 page", msg: text("x"),
			faults: []fake.QQFault{{Status: 502, HTML: true}},
			state:  push.StateUncertain, messages: 1, contains: []string{"502"}},
		{name: "uncertain: held for review", msg: text("x"),
			faults: []fake.QQFault{{Status: 202, Code: 304023, Message: "PUSH_MSG_ASYNC_OK"}},
			state:  push.StateUncertain, messages: 1, contains: []string{"304023", "review"}},
		{name: "uncertain: connection dropped after the request", msg: text("x"),
			drop: "messages", state: push.StateUncertain, messages: 1},
		{name: "uncertain: no answer in time", msg: text("x"), delay: 2 * time.Second,
			limits: push.Limits{AttemptTimeout: 300 * time.Millisecond},
			state:  push.StateUncertain, messages: 1, contains: []string{"no answer"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, testkit.WithLimits(tc.limits))
			tg := e.target(t, push.TargetUser)
			e.f.Fail(tc.faults...)
			if tc.drop != "" {
				e.f.DropNext(tc.drop, 1)
			}
			e.f.SetDelay(tc.delay)
			j := e.send(t, tg, tc.msg)
			if j.State != tc.state {
				t.Fatalf("job %s (%s), want %s", j.State, j.Error, tc.state)
			}
			for _, s := range tc.contains {
				if !strings.Contains(j.Error, s) {
					t.Errorf("job error %q lacks %q", j.Error, s)
				}
			}
			if tc.state == push.StateUncertain {
				time.Sleep(100 * time.Millisecond) // nothing may be resent meanwhile
			}
			if n := e.f.Requests("messages"); n != tc.messages {
				t.Errorf("%d message requests, want %d", n, tc.messages)
			}
			if n := e.f.Requests("files"); n != tc.files {
				t.Errorf("%d upload requests, want %d", n, tc.files)
			}
			if tc.state == push.StateSucceeded {
				if msgs := e.f.Messages(); len(msgs) != 1 {
					t.Errorf("fake accepted %d messages, want 1", len(msgs))
				}
			}
		})
	}
}

func TestUnreachableIsRetriedThenFails(t *testing.T) {
	e := newEnv(t, testkit.WithLimits(push.Limits{SendWindow: 300 * time.Millisecond}))
	tg := e.target(t, push.TargetUser)
	e.f.Close() // connection refused: nothing can have been sent
	j := e.send(t, tg, text("x"))
	if j.State != push.StateFailed || !strings.Contains(j.Error, "nothing was delivered") || strings.Contains(j.Error, "after 1 attempts") {
		t.Fatalf("job %s: %s; want failed after several attempts", j.State, j.Error)
	}
}

func TestTokenCachedAndSingleFlight(t *testing.T) {
	e := newEnv(t)
	var ids []int64
	for i := 0; i < 8; i++ {
		tg := e.target(t, push.TargetUser)
		e.talk(tg)
		ids = append(ids, tg.ID)
	}
	// A batch to 8 targets: the workers ask for the token at once.
	res, err := e.H.Engine.SendBatch(ctx, push.AccountPrincipal(e.Account.ID), push.BatchRequest{BotID: e.bot.ID, TargetIDs: ids, Message: text("all")})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range res.Jobs {
		if j := e.Settled(t, j.ID); j.State != push.StateSucceeded {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
	}
	tg := e.target(t, push.TargetUser)
	for i := 0; i < 5; i++ {
		if j := e.send(t, tg, text("again")); j.State != push.StateSucceeded {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
	}
	if n := e.f.TokenFetches(); n != 1 {
		t.Fatalf("%d token fetches for 13 sends, want 1", n)
	}
}

func TestTokenRefresh(t *testing.T) {
	tests := []struct {
		name       string
		tokenFault *fake.QQFault
		state      push.State
		fetches    int
		messages   int
		contains   []string
	}{
		{name: "expired token: refreshed once, then delivered", state: push.StateSucceeded, fetches: 2, messages: 3},
		{name: "refresh refused: definitive", state: push.StateFailed, fetches: 1, messages: 2,
			tokenFault: &fake.QQFault{On: "token", Status: 200, Code: 100016, Message: "invalid appid or secret"},
			contains:   []string{"100016", "invalid appid or secret", "app_id and client_secret"}},
		{name: "refresh busy: retried, then delivered", state: push.StateSucceeded, fetches: 2, messages: 3,
			tokenFault: &fake.QQFault{On: "token", Status: 200, Code: 100001, Message: "too many requests"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tg := e.target(t, push.TargetUser)
			if j := e.send(t, tg, text("first")); j.State != push.StateSucceeded {
				t.Fatalf("first send: %s %s", j.State, j.Error)
			}
			e.f.ExpireTokens()
			if tc.tokenFault != nil {
				e.f.Fail(*tc.tokenFault)
			}
			j := e.send(t, tg, text("second"))
			if j.State != tc.state {
				t.Fatalf("job %s (%s), want %s", j.State, j.Error, tc.state)
			}
			for _, s := range tc.contains {
				if !strings.Contains(j.Error, s) {
					t.Errorf("job error %q lacks %q", j.Error, s)
				}
			}
			if n := e.f.TokenFetches(); n != tc.fetches {
				t.Errorf("%d tokens handed out, want %d", n, tc.fetches)
			}
			if n := e.f.Requests("messages"); n != tc.messages {
				t.Errorf("%d message requests, want %d", n, tc.messages)
			}
		})
	}
}

func TestWrongCredentials(t *testing.T) {
	e := newEnv(t)
	cfg := e.f.BotConfig(e.appID, "wrong-secret-0123456789")
	bot, err := e.H.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: e.Account.ID, Platform: "qq", Name: "bad", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	e.f.AddUser("ABCDEF")
	tg, err := e.H.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: bot.ID, Type: push.TargetUser, Address: "ABCDEF"})
	if err != nil {
		t.Fatal(err)
	}
	// The bot hears nothing (its credentials are refused), so only a
	// wake-up message, which is no reply, reaches the platform.
	res, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: bot.ID, TargetID: tg.ID,
		Message: push.Message{Type: push.MsgTypeText, Content: "x", Wakeup: true}})
	if err != nil {
		t.Fatal(err)
	}
	j := e.Settled(t, res.Jobs[0].ID)
	if j.State != push.StateFailed || !strings.Contains(j.Error, "100016") || strings.Contains(j.Error, "wrong-secret") {
		t.Fatalf("job %s %q, want failed with 100016 and no secret", j.State, j.Error)
	}
	if e.f.Requests("messages") != 0 {
		t.Fatal("a message was sent without a token")
	}
}

func TestTimestampShapes(t *testing.T) {
	for _, intTS := range []bool{false, true} {
		e := newEnv(t)
		e.f.SetIntTimestamps(intTS)
		if j := e.send(t, e.target(t, push.TargetUser), text("ts")); j.State != push.StateSucceeded || j.PlatformIndex == "" {
			t.Fatalf("int timestamps %v: job %s %q", intTS, j.State, j.Error)
		}
	}
}

func TestNoCredentialInErrors(t *testing.T) {
	e := newEnv(t)
	tg := e.target(t, push.TargetUser)
	var errs []string
	var mu sync.Mutex
	record := func(j push.Job) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, j.Error)
	}
	record(e.send(t, tg, push.Message{Type: push.MsgTypeText, Content: "wake-up, refused", Wakeup: true}))
	e.f.Fail(fake.QQFault{Status: 401, Code: 11244, Message: "token not exist or expire"}, fake.QQFault{Status: 401, Code: 11244, Message: "token not exist or expire"})
	record(e.send(t, tg, text("token refused twice")))
	e.f.DropNext("messages", 1)
	record(e.send(t, tg, text("dropped")))
	e.f.ExpireTokens()
	e.f.Fail(fake.QQFault{On: "token", Code: 100016, Status: 200, Message: "invalid appid or secret"})
	record(e.send(t, tg, text("refresh refused")))
	for _, msg := range errs {
		if msg == "" {
			t.Fatal("a failed job without an error")
		}
		for _, secret := range append(e.f.IssuedTokens(), e.secret) {
			if strings.Contains(msg, secret) {
				t.Fatalf("job error %q contains a credential", msg)
			}
		}
	}
	if !strings.Contains(errs[1], "freshly issued") {
		t.Errorf("a fresh token refused again: %q", errs[1])
	}
}
