package feishu_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/feishu"
	"github.com/heraldpush/herald/push"
)

const (
	openID  = "ou_7d8a6e6df7621556ce0d21922b676706"
	unionID = "on_94a1ee5551019f18cd73d9f111898cf2"
	chatID  = "oc_a0553eda9014c201e6969b478895c230"
)

// delivered is what a test compares of a message the fake delivered.
type delivered struct {
	IDType, To, MsgType string
	Text, Markdown      string
	ImageSHA            string
}

func summarize(m fake.FeishuMessage) delivered {
	d := delivered{IDType: m.ReceiveIDType, To: m.ReceiveID, MsgType: m.MsgType, Text: m.Text, Markdown: m.Markdown}
	if m.Image != nil {
		d.ImageSHA = fake.SHA256(m.Image)
	}
	return d
}

func TestMessages(t *testing.T) {
	e := newEnv(t)
	app := e.fs.NewApp()
	e.fs.AddUser("open_id", openID)
	e.fs.AddUser("union_id", unionID)
	e.fs.AddUser("user_id", "4d7a3c6g")
	e.fs.AddUser("email", "zhang@example.com")
	e.fs.AddChat(chatID, true)
	bot := e.Bot(t, app.Config(e.fs), nil)
	user := e.Target(t, bot, push.TargetUser, openID)
	group := e.Target(t, bot, push.TargetGroup, chatID)
	pngSHA := fake.SHA256(e.Images.Data("/chart.png"))

	cases := []struct {
		name   string
		target push.Target
		msg    push.Message
		want   delivered
	}{
		{"text to a user", user, text("build 42 passed ✅"),
			delivered{IDType: "open_id", To: openID, MsgType: "text", Text: "build 42 passed ✅"}},
		{"markdown to a user is a card", user, markdown("**bold** and ![chart](https://e.com/c.png)"),
			delivered{IDType: "open_id", To: openID, MsgType: "interactive", Markdown: "**bold** and [chart](https://e.com/c.png)"}},
		{"image to a user", user, image(e.Images.URL("/chart.png"), ""),
			delivered{IDType: "open_id", To: openID, MsgType: "image", ImageSHA: pngSHA}},
		{"captioned image to a user is a post", user, image(e.Images.URL("/photo.jpg"), "今天的照片"),
			delivered{IDType: "open_id", To: openID, MsgType: "post", Text: "今天的照片", ImageSHA: fake.SHA256(e.Images.Data("/photo.jpg"))}},
		{"text to a group", group, text("hello chat"),
			delivered{IDType: "chat_id", To: chatID, MsgType: "text", Text: "hello chat"}},
		{"markdown to a group", group, markdown("# Title\n- a\n- b"),
			delivered{IDType: "chat_id", To: chatID, MsgType: "interactive", Markdown: "# Title\n- a\n- b"}},
		{"image to a group", group, image(e.Images.URL("/chart.png"), ""),
			delivered{IDType: "chat_id", To: chatID, MsgType: "image", ImageSHA: pngSHA}},
		{"union_id target", e.Target(t, bot, push.TargetUser, unionID), text("u"),
			delivered{IDType: "union_id", To: unionID, MsgType: "text", Text: "u"}},
		{"typed user_id target", e.Target(t, bot, push.TargetUser, "user_id:4d7a3c6g"), text("u"),
			delivered{IDType: "user_id", To: "4d7a3c6g", MsgType: "text", Text: "u"}},
		{"typed email target", e.Target(t, bot, push.TargetUser, "email:zhang@example.com"), text("u"),
			delivered{IDType: "email", To: "zhang@example.com", MsgType: "text", Text: "u"}},
		{"typed chat_id target", e.Target(t, bot, push.TargetGroup, "chat_id:"+chatID), text("g"),
			delivered{IDType: "chat_id", To: chatID, MsgType: "text", Text: "g"}},
	}
	ran := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.fs.Messages())
			j := e.Send(t, bot, c.target, c.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			msgs := e.fs.Messages()[before:]
			if len(msgs) != 1 {
				t.Fatalf("fake delivered %d messages, want 1", len(msgs))
			}
			if diff := cmp.Diff(c.want, summarize(msgs[0])); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
			if j.PlatformIndex != msgs[0].MessageID || !strings.HasPrefix(j.PlatformIndex, "om_") {
				t.Errorf("platformIndex %q, fake message_id %q", j.PlatformIndex, msgs[0].MessageID)
			}
			if msgs[0].UUID != j.ID {
				t.Errorf("uuid %q, want the job id %q", msgs[0].UUID, j.ID)
			}
			ran++
		})
	}
	if ran < len(cases) {
		return // the checks of all the cases together need every case, not a -run of some
	}
	// Uploads are multipart image_type=message with the image's bytes.
	for _, u := range e.fs.Uploads() {
		if u.ImageType != "message" || u.Filename == "" || !strings.HasPrefix(u.ContentType, "image/") {
			t.Errorf("upload %+v", u)
		}
	}
	if ups := e.fs.Uploads(); len(ups) != 3 || fake.SHA256(ups[0].Data) != pngSHA {
		t.Fatalf("%d uploads; first matches the served image: %v", len(ups), len(ups) > 0 && fake.SHA256(ups[0].Data) == pngSHA)
	}
	// The card is schema 2.0 with one markdown element.
	var card struct {
		Schema string `json:"schema"`
		Body   struct {
			Elements []map[string]string `json:"elements"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(e.fs.Messages()[1].Content), &card); err != nil || card.Schema != "2.0" || len(card.Body.Elements) != 1 || card.Body.Elements[0]["tag"] != "markdown" {
		t.Fatalf("card content %s (%v)", e.fs.Messages()[1].Content, err)
	}
}

func TestConfigAndTargetValidation(t *testing.T) {
	e := newEnv(t)
	const secret = "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
	configs := []struct {
		name, cfg, want string
	}{
		{"valid", `{"app_id":"cli_a1b2c3d4e5f6a7b8","app_secret":"` + secret + `"}`, ""},
		{"valid lark", `{"app_id":"cli_a1b2c3d4e5f6a7b8","app_secret":"` + secret + `","domain":"lark"}`, ""},
		{"valid with bases", `{"app_id":"cli_a1b2","app_secret":"` + secret + `","api_base":"https://proxy.example.com","token_base":"https://tok.example.com"}`, ""},
		{"empty", `{}`, "app_id is missing"},
		{"bad app id", `{"app_id":"a1b2c3","app_secret":"` + secret + `"}`, "app_id is malformed"},
		{"no secret", `{"app_id":"cli_a1b2c3d4"}`, "app_secret is missing"},
		{"bad secret", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + ` x"}`, "app_secret is malformed"},
		{"unknown domain", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + `","domain":"larksuite"}`, "domain is malformed"},
		{"bad api base", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + `","api_base":"open.feishu.cn"}`, "api_base is malformed"},
		{"secret as a number", `{"app_id":"cli_a1b2c3d4","app_secret":12345678}`, "field app_secret must be a string"},
		{"unknown field", `{"app_id":"cli_a1b2c3d4","appSecret":"` + secret + `"}`, `unknown field "appSecret"`},
		{"valid long connection", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + `","receive":"longconn","api_base":"http://127.0.0.1:1"}`, ""},
		{"valid webhook", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + `","receive":"webhook","verification_token":"t0ken","encrypt_key":"k3y"}`, ""},
		{"unknown receive mode", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + `","receive":"poll"}`, "receive is malformed"},
		{"webhook without a token", `{"app_id":"cli_a1b2c3d4","app_secret":"` + secret + `","receive":"webhook","encrypt_key":"k3y"}`, "verification_token is missing"},
	}
	for _, c := range configs {
		t.Run("config "+c.name, func(t *testing.T) {
			_, err := e.H.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: e.Account.ID, Platform: "feishu", Name: "b", Config: json.RawMessage(c.cfg)})
			if c.want == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if push.KindOf(err) != push.Invalid || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want Invalid containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error echoes the secret: %v", err)
			}
		})
	}
	bot := e.Bot(t, e.fs.NewApp().Config(e.fs), nil)
	targets := []struct {
		name string
		tt   push.TargetType
		addr string
		ok   bool
	}{
		{"open_id", push.TargetUser, openID, true},
		{"union_id", push.TargetUser, unionID, true},
		{"typed open_id", push.TargetUser, "open_id:" + openID, true},
		{"typed user_id", push.TargetUser, "user_id:4d7a3c6g", true},
		{"typed email", push.TargetUser, "email:a.b@example.com", true},
		{"bare user_id", push.TargetUser, "4d7a3c6g", false},
		{"chat as user", push.TargetUser, chatID, false},
		{"bad email", push.TargetUser, "email:not-an-address", false},
		{"open_id typed as union_id", push.TargetUser, "union_id:" + openID, false},
		{"unknown id type", push.TargetUser, "mobile:13800000000", false},
		{"chat", push.TargetGroup, chatID, true},
		{"typed chat", push.TargetGroup, "chat_id:" + chatID, true},
		{"user as group", push.TargetGroup, openID, false},
		{"email as group", push.TargetGroup, "email:a@example.com", false},
	}
	for _, c := range targets {
		t.Run("target "+c.name, func(t *testing.T) {
			_, err := e.H.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: bot.ID, Type: c.tt, Address: c.addr})
			if c.ok != (err == nil) {
				t.Fatalf("bind %s %q = %v, want ok=%v", c.tt, c.addr, err, c.ok)
			}
			if err != nil && push.KindOf(err) != push.Invalid {
				t.Fatalf("error kind %v", push.KindOf(err))
			}
		})
	}
}

func TestTokenCacheAndRefresh(t *testing.T) {
	e := newEnv(t)
	app := e.fs.NewApp()
	e.fs.AddUser("open_id", openID)
	bot := e.Bot(t, app.Config(e.fs), nil)
	user := e.Target(t, bot, push.TargetUser, openID)

	steps := []struct {
		name        string
		before      func()
		wantFetches int // total token fetches after the step
		wantSends   int // send requests of the step
	}{
		{"first send fetches a token", func() {}, 1, 1},
		{"cached token reused", func() {}, 1, 1},
		{"expired token refreshed, send retried once", e.fs.ExpireTokens, 2, 2},
		{"token refused as invalid", func() {
			e.fs.Fail(fake.FeishuOpSend, fake.FeishuFault{Code: 99991663, Msg: "Invalid access token for authorization."})
		}, 3, 2},
		{"refreshed early, before it expires", func() { e.H.Clock.Advance(7200*time.Second - 2*time.Minute) }, 4, 1},
		{"token endpoint rate-limited, retried", func() {
			e.H.Clock.Advance(3 * time.Hour)
			e.fs.Fail(fake.FeishuOpToken, fake.FeishuFault{Status: 429, Code: 99991400, Msg: "request trigger frequency limit", RetryAfter: 1})
		}, 6, 1},
	}
	// The steps build on each other, so they are one test, not subtests
	// that -run could pick alone.
	for _, s := range steps {
		s.before()
		sends, got := e.fs.Requests(fake.FeishuOpSend), len(e.fs.Messages())
		j := e.Send(t, bot, user, text(s.name))
		if j.State != push.StateSucceeded {
			t.Fatalf("%s: job %s: %s", s.name, j.State, j.Error)
		}
		if n := e.fs.TokenFetches(); n != s.wantFetches {
			t.Errorf("%s: token fetches %d, want %d", s.name, n, s.wantFetches)
		}
		if n := e.fs.Requests(fake.FeishuOpSend) - sends; n != s.wantSends {
			t.Errorf("%s: send requests %d, want %d", s.name, n, s.wantSends)
		}
		if n := len(e.fs.Messages()) - got; n != 1 {
			t.Errorf("%s: delivered %d, want 1", s.name, n)
		}
	}
	t.Run("wrong secret fails without echoing it", func(t *testing.T) {
		bad := app
		bad.AppSecret = "WrongSecret0123456789abcdefghijk"
		b := e.Bot(t, bad.Config(e.fs), nil)
		j := e.Send(t, b, e.Target(t, b, push.TargetUser, openID), text("x"))
		if j.State != push.StateFailed || !strings.Contains(j.Error, "(code 10014)") || !strings.Contains(j.Error, "app secret invalid") {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
		if strings.Contains(j.Error, bad.AppSecret) {
			t.Fatalf("error echoes the secret: %s", j.Error)
		}
	})
	t.Run("concurrent first sends share one fetch", func(t *testing.T) {
		app2 := e.fs.NewApp()
		b := e.Bot(t, app2.Config(e.fs), nil)
		var ids []int64
		for _, u := range []string{"a1", "a2", "a3", "a4", "a5", "a6"} {
			e.fs.AddUser("user_id", u)
			ids = append(ids, e.Target(t, b, push.TargetUser, "user_id:"+u).ID)
		}
		before := e.fs.TokenFetches()
		e.fs.Fail(fake.FeishuOpToken, fake.FeishuFault{Delay: 200 * time.Millisecond})
		res, err := e.H.Engine.SendBatch(ctx, push.AccountPrincipal(e.Account.ID), push.BatchRequest{BotID: b.ID, TargetIDs: ids, Message: text("all")})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
		}
		if n := e.fs.TokenFetches() - before; n != 1 {
			t.Fatalf("%d token fetches, want 1", n)
		}
	})
}

// TestErrorClasses: definitive refusals fail the job with Feishu's code
// and text; retryable ones are retried and delivered; a lost answer is
// re-sent once with the same uuid, which Feishu delivers at most once; a
// job stays uncertain only when that second try fails too, and is then
// never sent again.
func TestErrorClasses(t *testing.T) {
	e := newEnv(t)
	app := e.fs.NewApp()
	e.fs.AddUser("open_id", openID)
	e.fs.AddChat(chatID, true)
	const outside = "oc_00000000000000000000000000000000"
	e.fs.AddChat(outside, false)
	bot := e.Bot(t, app.Config(e.fs), nil)
	user := e.Target(t, bot, push.TargetUser, openID)
	stranger := e.Target(t, bot, push.TargetUser, "ou_ffffffffffffffffffffffffffffffff")
	unknownChat := e.Target(t, bot, push.TargetGroup, "oc_11111111111111111111111111111111")
	notMember := e.Target(t, bot, push.TargetGroup, outside)
	e.Images.Add("/blob", []byte("not an image at all"), "application/octet-stream")
	gateway := fake.FeishuFault{Status: 502, Body: "<html><body>502 Bad Gateway</body></html>"}

	cases := []struct {
		name      string
		target    push.Target
		msg       push.Message
		faults    map[string][]fake.FeishuFault
		state     push.State
		errHas    []string
		delivered int
		sends     int
		deduped   int
		uploads   int
	}{
		{name: "user outside availability", target: stranger, msg: text("x"), state: push.StateFailed,
			errHas: []string{"(code 230013)", "Bot has NO availability to this user"}, sends: 1},
		{name: "unknown chat", target: unknownChat, msg: text("x"), state: push.StateFailed,
			errHas: []string{"(code 230001)", "invalid receive_id"}, sends: 1},
		{name: "bot not in the chat", target: notMember, msg: text("x"), state: push.StateFailed,
			errHas: []string{"(code 230002)", "add the bot to the chat"}, sends: 1},
		{name: "missing scope", target: user, msg: text("x"), state: push.StateFailed,
			faults: map[string][]fake.FeishuFault{"send": {{Code: 99991672, Msg: "Access denied. One of the following scopes is required: [im:message]"}}},
			errHas: []string{"(code 99991672)", "Access denied", "im:message:send_as_bot"}, sends: 1},
		{name: "too long", target: user, msg: text("x"), state: push.StateFailed,
			faults: map[string][]fake.FeishuFault{"send": {{Code: 230025, Msg: "The length of the message content reaches its limit."}}},
			errHas: []string{"(code 230025)"}, sends: 1},
		{name: "a freshly issued token refused again: failed, not retried", target: user, msg: text("x"), state: push.StateFailed,
			faults: map[string][]fake.FeishuFault{"send": {{Code: 99991663, Msg: "Invalid access token for authorization."}, {Code: 99991663, Msg: "Invalid access token for authorization."}}},
			errHas: []string{"(code 99991663)", "freshly issued", "token_base"}, sends: 2},
		{name: "429 waits x-ogw-ratelimit-reset", target: user, msg: text("x"), state: push.StateSucceeded,
			faults:    map[string][]fake.FeishuFault{"send": {{Status: 429, Code: 99991400, Msg: "request trigger frequency limit", RetryAfter: 1}}},
			delivered: 1, sends: 2},
		{name: "per-chat rate limit", target: user, msg: text("x"), state: push.StateSucceeded,
			faults:    map[string][]fake.FeishuFault{"send": {{Code: 230020, Msg: "This operation triggers the frequency limit."}}},
			delivered: 1, sends: 2},
		{name: "answer lost after delivery: re-sent with the uuid, not delivered twice", target: user, msg: text("x"), state: push.StateSucceeded,
			faults:    map[string][]fake.FeishuFault{"send": {{Drop: true, Process: true}}},
			delivered: 1, sends: 2, deduped: 1},
		{name: "dropped before Feishu acted: re-sent and delivered", target: user, msg: text("x"), state: push.StateSucceeded,
			faults:    map[string][]fake.FeishuFault{"send": {{Drop: true}}},
			delivered: 1, sends: 2},
		{name: "gateway 502 after delivery, then answered", target: user, msg: text("x"), state: push.StateSucceeded,
			faults:    map[string][]fake.FeishuFault{"send": {{Status: 502, Body: "<html>502</html>", Process: true}}},
			delivered: 1, sends: 2, deduped: 1},
		{name: "two lost answers: uncertain, never sent again", target: user, msg: text("x"), state: push.StateUncertain,
			faults:    map[string][]fake.FeishuFault{"send": {{Drop: true, Process: true}, gateway}},
			errHas:    []string{"same uuid", "HTTP 502", "may have received"},
			delivered: 1, sends: 2},
		{name: "unreadable 200 twice: uncertain", target: user, msg: text("x"), state: push.StateUncertain,
			faults:    map[string][]fake.FeishuFault{"send": {{Status: 200, Body: "oops"}, {Status: 200, Body: "oops"}}},
			errHas:    []string{"could not be read"},
			delivered: 0, sends: 2},
		{name: "upload dropped is retried: no message was sent", target: user, msg: image(e.Images.URL("/chart.png"), ""), state: push.StateSucceeded,
			faults:    map[string][]fake.FeishuFault{"upload": {{Drop: true, Process: true}}},
			delivered: 1, sends: 1, uploads: 2},
		{name: "upload refused", target: user, msg: image(e.Images.URL("/chart.png"), ""), state: push.StateFailed,
			faults: map[string][]fake.FeishuFault{"upload": {{Code: 234006, Msg: "The image size exceeds the limit."}}},
			errHas: []string{"(code 234006)"}, uploads: 1},
		{name: "not an image", target: user, msg: image(e.Images.URL("/blob"), ""), state: push.StateFailed,
			errHas: []string{"did not return an image"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for op, fs := range c.faults {
				e.fs.Fail(op, fs...)
			}
			sends, got, dedup, ups := e.fs.Requests(fake.FeishuOpSend), len(e.fs.Messages()), e.fs.Deduplicated(), e.fs.Requests(fake.FeishuOpUpload)
			start := time.Now()
			j := e.Send(t, bot, c.target, c.msg)
			if j.State != c.state {
				t.Fatalf("job %s (%s), want %s", j.State, j.Error, c.state)
			}
			for _, s := range c.errHas {
				if !strings.Contains(j.Error, s) {
					t.Errorf("job error %q lacks %q", j.Error, s)
				}
			}
			if strings.Contains(c.name, "429") && time.Since(start) < 900*time.Millisecond {
				t.Errorf("retried after %s, before the 1 s Feishu asked for", time.Since(start))
			}
			time.Sleep(100 * time.Millisecond)
			gotN := []int{len(e.fs.Messages()) - got, e.fs.Requests(fake.FeishuOpSend) - sends, e.fs.Deduplicated() - dedup, e.fs.Requests(fake.FeishuOpUpload) - ups}
			if diff := cmp.Diff([]int{c.delivered, c.sends, c.deduped, c.uploads}, gotN); diff != "" {
				t.Errorf("delivered, send requests, deduplicated, uploads (-want +got):\n%s", diff)
			}
			if c.state == push.StateSucceeded && c.delivered == 1 {
				msgs := e.fs.Messages()
				if j.PlatformIndex != msgs[len(msgs)-1].MessageID {
					t.Errorf("platformIndex %q, delivered message %q", j.PlatformIndex, msgs[len(msgs)-1].MessageID)
				}
			}
			for _, secret := range append(e.fs.IssuedTokens(), app.AppSecret) {
				if strings.Contains(j.Error, secret) {
					t.Fatalf("job error carries a credential: %s", j.Error)
				}
			}
		})
	}
}

// TestTimeoutResend: an answer that does not come within the first two
// thirds of the attempt is re-sent with the same uuid in the last third.
func TestTimeoutResend(t *testing.T) {
	e := newEnv(t, testkit.WithLimits(push.Limits{AttemptTimeout: 1500 * time.Millisecond}))
	app := e.fs.NewApp()
	e.fs.AddUser("open_id", openID)
	bot := e.Bot(t, app.Config(e.fs), nil)
	user := e.Target(t, bot, push.TargetUser, openID)
	e.Send(t, bot, user, text("warm the token cache"))

	// Delivered, but the answer comes after 1.2 s: too late for the first
	// 1 s; the re-send is answered at once with the same message.
	e.fs.Fail(fake.FeishuOpSend, fake.FeishuFault{Process: true, Delay: 1200 * time.Millisecond})
	j := e.Send(t, bot, user, text("slow"))
	msgs := e.fs.Messages()
	if j.State != push.StateSucceeded || len(msgs) != 2 || j.PlatformIndex != msgs[1].MessageID || e.fs.Deduplicated() != 1 {
		t.Fatalf("job %s %q (%s); %d delivered, %d deduplicated", j.State, j.PlatformIndex, j.Error, len(msgs), e.fs.Deduplicated())
	}
	// Both slow: uncertain.
	e.fs.Fail(fake.FeishuOpSend, fake.FeishuFault{Process: true, Delay: 3 * time.Second}, fake.FeishuFault{Delay: 3 * time.Second})
	j = e.Send(t, bot, user, text("slower"))
	if j.State != push.StateUncertain || !strings.Contains(j.Error, "same uuid") {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	time.Sleep(3500 * time.Millisecond)
	if n := e.fs.Requests(fake.FeishuOpSend); n != 5 {
		t.Fatalf("%d send requests, want 5 (1 + 2 + 2, never more)", n)
	}
	if n := len(e.fs.Messages()); n != 3 {
		t.Fatalf("%d delivered, want 3", n)
	}
}

// hostRewriter sends every request to the fake and records the host it
// was meant for.
type hostRewriter struct {
	fake  string
	mu    sync.Mutex
	hosts []string
}

func (h *hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts = append(h.hosts, r.URL.Scheme+"://"+r.URL.Host+r.URL.Path)
	h.mu.Unlock()
	r2 := r.Clone(r.Context())
	r2.URL.Scheme, r2.URL.Host = "http", strings.TrimPrefix(h.fake, "http://")
	return http.DefaultTransport.RoundTrip(r2)
}

// TestDomains: the domain picks the host (Feishu or Lark), api_base and
// token_base override it.
func TestDomains(t *testing.T) {
	fsrv := fake.NewFeishu(t)
	app := fsrv.NewApp()
	fsrv.AddUser("open_id", openID)
	cases := []struct {
		name  string
		extra map[string]string
		want  []string
	}{
		{"feishu by default", nil, []string{
			"https://open.feishu.cn/open-apis/auth/v3/tenant_access_token/internal", "https://open.feishu.cn/open-apis/im/v1/messages"}},
		{"lark", map[string]string{"domain": "lark"}, []string{
			"https://open.larksuite.com/open-apis/auth/v3/tenant_access_token/internal", "https://open.larksuite.com/open-apis/im/v1/messages"}},
		{"api base", map[string]string{"domain": "lark", "api_base": "https://proxy.example.com/"}, []string{
			"https://proxy.example.com/open-apis/auth/v3/tenant_access_token/internal", "https://proxy.example.com/open-apis/im/v1/messages"}},
		{"token base", map[string]string{"api_base": "https://api.example.com", "token_base": "https://auth.example.com"}, []string{
			"https://auth.example.com/open-apis/auth/v3/tenant_access_token/internal", "https://api.example.com/open-apis/im/v1/messages"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rw := &hostRewriter{fake: fsrv.URL()}
			p := feishu.New(platforms.NewEnv(platforms.Options{Transport: rw, NoPacing: true}), feishu.Options{})
			cfg := map[string]string{"app_id": app.AppID, "app_secret": app.AppSecret}
			for k, v := range c.extra {
				cfg[k] = v
			}
			raw, _ := json.Marshal(cfg)
			if err := p.ValidateConfig(raw); err != nil {
				t.Fatal(err)
			}
			_, err := p.Send(ctx, push.Delivery{JobID: "j-" + c.name, Bot: push.Bot{Config: raw}, Target: push.Target{Type: push.TargetUser, Address: openID},
				Message: push.Message{Type: push.MsgTypeText, Content: "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, rw.hosts); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
