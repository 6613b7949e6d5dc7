package wecom_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// delivered is what a test compares of a message the fake delivered.
type delivered struct {
	Via, To, MsgType, Content string
	ImageSHA                  string
	Articles                  []fake.WeComArticle
}

func summarize(m fake.WeComMessage) delivered {
	d := delivered{Via: m.Via, To: m.ToUser + m.ChatID, MsgType: m.MsgType, Content: m.Content, Articles: m.Articles}
	if m.Image != nil {
		d.ImageSHA = fake.SHA256(m.Image)
	}
	return d
}

func TestAppMessages(t *testing.T) {
	e := newEnv(t)
	app := e.wc.NewApp()
	e.wc.AddUser(app.CorpID, "ZhangSan", fake.WeComActive)
	e.wc.AddChat(app.CorpID, "wrOgQhDgAAMYQiS5ol")
	bot := e.Bot(t, app.Config(e.wc), nil)
	user := e.Target(t, bot, push.TargetUser, "ZhangSan")
	group := e.Target(t, bot, push.TargetGroup, "wrOgQhDgAAMYQiS5ol")
	pngSHA, jpgSHA := fake.SHA256(e.Images.Data("/chart.png")), fake.SHA256(e.Images.Data("/photo.jpg"))

	cases := []struct {
		name   string
		target push.Target
		msg    push.Message
		want   delivered
	}{
		{"text to a member", user, text("deploy finished 部署完成"),
			delivered{Via: "app", To: "ZhangSan", MsgType: "text", Content: "deploy finished 部署完成"}},
		{"markdown to a member, image as a link", user, markdown("# Build\n**ok** ![chart](https://e.com/c.png)"),
			delivered{Via: "app", To: "ZhangSan", MsgType: "markdown", Content: "# Build\n**ok** [chart](https://e.com/c.png)"}},
		{"png to a member", user, image(e.Images.URL("/chart.png"), ""),
			delivered{Via: "app", To: "ZhangSan", MsgType: "image", ImageSHA: pngSHA}},
		{"jpeg to a member", user, image(e.Images.URL("/photo.jpg"), ""),
			delivered{Via: "app", To: "ZhangSan", MsgType: "image", ImageSHA: jpgSHA}},
		{"captioned image to a member is a news card", user, image(e.Images.URL("/chart.png"), "今日图表"),
			delivered{Via: "app", To: "ZhangSan", MsgType: "news", Articles: []fake.WeComArticle{
				{Title: "今日图表", URL: e.Images.URL("/chart.png"), PicURL: e.Images.URL("/chart.png")}}}},
		{"text to an app group chat", group, text("hello group"),
			delivered{Via: "appchat", To: "wrOgQhDgAAMYQiS5ol", MsgType: "text", Content: "hello group"}},
		{"markdown to an app group chat", group, markdown("> quoted\n`code`"),
			delivered{Via: "appchat", To: "wrOgQhDgAAMYQiS5ol", MsgType: "markdown", Content: "> quoted\n`code`"}},
		{"image to an app group chat", group, image(e.Images.URL("/chart.png"), ""),
			delivered{Via: "appchat", To: "wrOgQhDgAAMYQiS5ol", MsgType: "image", ImageSHA: pngSHA}},
	}
	ran := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.wc.Messages())
			j := e.Send(t, bot, c.target, c.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			msgs := e.wc.Messages()[before:]
			if len(msgs) != 1 {
				t.Fatalf("fake delivered %d messages, want 1", len(msgs))
			}
			if diff := cmp.Diff(c.want, summarize(msgs[0])); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
			// message/send returns a msgid; appchat/send returns none.
			if j.PlatformIndex != msgs[0].MsgID || (c.target.Type == push.TargetUser) != (j.PlatformIndex != "") {
				t.Errorf("platformIndex = %q, fake msgid %q", j.PlatformIndex, msgs[0].MsgID)
			}
			if msgs[0].Via == "app" && msgs[0].AgentID != app.AgentID {
				t.Errorf("agentid %d, want %d", msgs[0].AgentID, app.AgentID)
			}
			ran++
		})
	}
	if ran < len(cases) {
		return // the checks of all the cases together need every case, not a -run of some
	}
	// Uploads carried the image bytes as multipart "media" with a file
	// name and length.
	ups := e.wc.Uploads()
	if len(ups) != 3 {
		t.Fatalf("%d uploads, want 3", len(ups))
	}
	for _, u := range ups {
		if u.Filename == "" || u.FileLength != fmt.Sprint(len(u.Data)) || !strings.HasPrefix(u.ContentType, "image/") {
			t.Errorf("upload %s: filename %q filelength %q type %q (%d bytes)", u.MediaID, u.Filename, u.FileLength, u.ContentType, len(u.Data))
		}
	}
	if got := []string{fake.SHA256(ups[0].Data), fake.SHA256(ups[1].Data)}; got[0] != pngSHA || got[1] != jpgSHA {
		t.Errorf("uploaded bytes differ from the served images")
	}
}

func TestRobotMessages(t *testing.T) {
	e := newEnv(t)
	key := e.wc.NewRobot()
	bot := e.Bot(t, e.wc.RobotConfig(key), nil)
	group := e.Target(t, bot, push.TargetGroup, "robot")
	e.Images.Add("/big.png", fake.LargePNG(2<<20+1), "image/png")
	long := strings.Repeat("长", 1300) // 3900 bytes: over the app's 2048, within the robot's 4096

	cases := []struct {
		name string
		msg  push.Message
		want delivered
	}{
		{"text", text("robot says hi"), delivered{Via: "robot", MsgType: "text", Content: "robot says hi"}},
		{"markdown", markdown("## T\n![](https://e.com/x.png)"), delivered{Via: "robot", MsgType: "markdown", Content: "## T\n[https://e.com/x.png](https://e.com/x.png)"}},
		{"long markdown within 4096 bytes", markdown(long), delivered{Via: "robot", MsgType: "markdown", Content: long}},
		{"image as base64 and md5", image(e.Images.URL("/chart.png"), ""), delivered{Via: "robot", MsgType: "image", ImageSHA: fake.SHA256(e.Images.Data("/chart.png"))}},
		{"captioned image", image(e.Images.URL("/photo.jpg"), "photo"), delivered{Via: "robot", MsgType: "news", Articles: []fake.WeComArticle{
			{Title: "photo", URL: e.Images.URL("/photo.jpg"), PicURL: e.Images.URL("/photo.jpg")}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.wc.Messages())
			j := e.Send(t, bot, group, c.msg)
			if j.State != push.StateSucceeded || j.PlatformIndex != "" {
				t.Fatalf("job %s %q: %s", j.State, j.PlatformIndex, j.Error)
			}
			msgs := e.wc.Messages()[before:]
			if len(msgs) != 1 || msgs[0].RobotKey != key {
				t.Fatalf("fake delivered %+v", msgs)
			}
			if diff := cmp.Diff(c.want, summarize(msgs[0])); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("image over 2 MB is refused before sending", func(t *testing.T) {
		sends := e.wc.Requests(fake.WeComOpSend)
		j := e.Send(t, bot, group, image(e.Images.URL("/big.png"), ""))
		if j.State != push.StateFailed || !strings.Contains(j.Error, "image_too_large") {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
		if e.wc.Requests(fake.WeComOpSend) != sends {
			t.Error("the oversized image reached the webhook")
		}
	})
}

func TestConfigValidation(t *testing.T) {
	e := newEnv(t)
	const secret = "Sup3rS3cretValue_abcdefghijklmnop"
	const hookKey = "693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa"
	const cbToken, aesKey = "CallbackT0kenSecret", "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
	cases := []struct {
		name string
		cfg  string
		want string // "" for valid
	}{
		{"valid app", `{"corp_id":"ww0123456789abcdef","corp_secret":"` + secret + `","agent_id":1000002}`, ""},
		{"valid app with options", `{"mode":"app","corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"duplicate_check_interval":1800,"api_base":"https://proxy.example.com","token_base":"https://tok.example.com"}`, ""},
		{"valid robot", `{"mode":"robot","webhook_key":"` + hookKey + `"}`, ""},
		{"empty", `{}`, "corp_id is missing"},
		{"bad corp id", `{"corp_id":"ww 01","corp_secret":"` + secret + `","agent_id":1}`, "corp_id is malformed"},
		{"no secret", `{"corp_id":"ww01","agent_id":1}`, "corp_secret is missing"},
		{"bad secret", `{"corp_id":"ww01","corp_secret":"` + secret + `!","agent_id":1}`, "corp_secret is malformed"},
		{"no agent id", `{"corp_id":"ww01","corp_secret":"` + secret + `"}`, "agent_id is missing"},
		{"negative agent id", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":-5}`, "agent_id is malformed"},
		{"agent id as string", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":"1000002"}`, "field agent_id must be a int64"},
		{"interval too long", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"duplicate_check_interval":20000}`, "duplicate_check_interval is malformed"},
		{"unknown mode", `{"mode":"bot","webhook_key":"` + hookKey + `"}`, "mode is malformed"},
		{"webhook key on an app", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"webhook_key":"` + hookKey + `"}`, `webhook_key is only used by a bot in mode "robot"`},
		{"robot without key", `{"mode":"robot"}`, "webhook_key is missing"},
		{"robot with the whole URL", `{"mode":"robot","webhook_key":"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=` + hookKey + `"}`, "webhook_key is malformed"},
		{"robot with a secret", `{"mode":"robot","webhook_key":"` + hookKey + `","corp_secret":"` + secret + `"}`, `corp_secret is only used by a bot in mode "app"`},
		{"robot with duplicate check", `{"mode":"robot","webhook_key":"` + hookKey + `","duplicate_check_interval":60}`, "duplicate_check_interval is only used"},
		{"bad api base", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"api_base":"ftp://x"}`, "api_base is malformed"},
		{"bad token base", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"token_base":"https://x/?a=1"}`, "token_base is malformed"},
		{"unknown field", `{"corp_id":"ww01","secret":"` + secret + `","agent_id":1}`, `unknown field "secret"`},
		{"not an object", `[1]`, "not a JSON object"},
		{"valid callback", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"token":"` + cbToken + `","encoding_aes_key":"` + aesKey + `"}`, ""},
		{"token without key", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"token":"` + cbToken + `"}`, "encoding_aes_key is missing"},
		{"key without token", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"encoding_aes_key":"` + aesKey + `"}`, "token is missing"},
		{"bad token", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"token":"` + cbToken + `!","encoding_aes_key":"` + aesKey + `"}`, "token is malformed"},
		{"short key", `{"corp_id":"ww01","corp_secret":"` + secret + `","agent_id":1,"token":"` + cbToken + `","encoding_aes_key":"` + aesKey[:42] + `"}`, "encoding_aes_key is malformed"},
		{"robot with a callback", `{"mode":"robot","webhook_key":"` + hookKey + `","token":"` + cbToken + `"}`, `token is only used by a bot in mode "app"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.H.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: e.Account.ID, Platform: "wecom", Name: "b", Config: json.RawMessage(c.cfg)})
			if c.want == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if push.KindOf(err) != push.Invalid || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want Invalid containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), hookKey) ||
				strings.Contains(err.Error(), cbToken) || strings.Contains(err.Error(), aesKey[:42]) {
				t.Fatalf("error echoes a credential: %v", err)
			}
		})
	}
}

func TestTargetValidation(t *testing.T) {
	e := newEnv(t)
	app := e.Bot(t, e.wc.NewApp().Config(e.wc), nil)
	robot := e.Bot(t, e.wc.RobotConfig(e.wc.NewRobot()), nil)
	cases := []struct {
		name string
		bot  push.Bot
		tt   push.TargetType
		addr string
		ok   bool
	}{
		{"member", app, push.TargetUser, "zhang.san@corp", true},
		{"member with digits", app, push.TargetUser, "10086", true},
		{"everyone", app, push.TargetUser, "@all", false},
		{"two members", app, push.TargetUser, "a|b", false},
		{"leading dash", app, push.TargetUser, "-x", false},
		{"too long", app, push.TargetUser, strings.Repeat("a", 65), false},
		{"app chat", app, push.TargetGroup, "wrOgQhDgAAMYQiS5ol", true},
		{"chat id with a dash", app, push.TargetGroup, "chat-1", false},
		{"robot group", robot, push.TargetGroup, "robot", true},
		{"robot group named otherwise", robot, push.TargetGroup, "ops", false},
		{"robot user", robot, push.TargetUser, "robot", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.H.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: c.bot.ID, Type: c.tt, Address: c.addr})
			if c.ok != (err == nil) {
				t.Fatalf("bind %s %q = %v, want ok=%v", c.tt, c.addr, err, c.ok)
			}
			if err != nil && push.KindOf(err) != push.Invalid {
				t.Fatalf("bind error kind %v, want Invalid", push.KindOf(err))
			}
		})
	}
	// A robot bot has exactly one target (bound here when the case that
	// binds it did not run).
	if _, err := e.H.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: robot.ID, Type: push.TargetGroup, Address: "robot"}); err != nil && push.KindOf(err) != push.Conflict {
		t.Fatal(err)
	}
	if _, err := e.H.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: robot.ID, Type: push.TargetGroup, Address: "robot"}); push.KindOf(err) != push.Conflict {
		t.Fatalf("second robot target: %v, want Conflict", err)
	}
}

// TestMessageLimits: WeCom's byte limits are checked before anything is
// queued or charged; text at the limit is delivered whole.
func TestMessageLimits(t *testing.T) {
	e := newEnv(t, testkit.WithPoints(push.Points{Enabled: true}))
	app := e.wc.NewApp()
	e.wc.AddUser(app.CorpID, "u1", fake.WeComActive)
	appBot := e.Bot(t, app.Config(e.wc), nil)
	user := e.Target(t, appBot, push.TargetUser, "u1")
	robotBot := e.Bot(t, e.wc.RobotConfig(e.wc.NewRobot()), nil)
	group := e.Target(t, robotBot, push.TargetGroup, "robot")

	at2048 := strings.Repeat("字", 682) + "ab"    // 2046 + 2 bytes
	over2048 := strings.Repeat("字", 683)         // 2049 bytes, 683 characters
	over4096 := strings.Repeat("字", 1365) + "ab" // 4097 bytes
	cases := []struct {
		name   string
		bot    push.Bot
		target push.Target
		msg    push.Message
		reason string // "" when accepted
	}{
		{"text of 2048 bytes", appBot, user, text(at2048), ""},
		{"text of 2049 bytes", appBot, user, text(over2048), "content_too_long"},
		{"robot text of 2049 bytes", robotBot, group, text(over2048), "content_too_long"},
		{"app markdown of 2049 bytes", appBot, user, markdown(over2048), "content_too_long"},
		{"robot markdown of 2049 bytes", robotBot, group, markdown(over2048), ""},
		{"robot markdown of 4097 bytes", robotBot, group, markdown(over4096), "content_too_long"},
		{"caption of 129 bytes", appBot, user, image(e.Images.URL("/chart.png"), strings.Repeat("c", 129)), "caption_too_long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			points, jobs := e.H.Balance(t, e.Account.ID), e.H.CountJobs(t)
			res, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: c.bot.ID, TargetID: c.target.ID, Message: c.msg})
			if c.reason != "" {
				if push.KindOf(err) != push.Invalid || push.ReasonOf(err) != c.reason {
					t.Fatalf("send = %v, want Invalid %s", err, c.reason)
				}
				if e.H.Balance(t, e.Account.ID) != points || e.H.CountJobs(t) != jobs {
					t.Fatal("a refused message was charged or queued")
				}
				return
			}
			if err != nil || res.Jobs[0].State != push.StateSucceeded {
				t.Fatalf("send = %v %+v", err, res.Jobs)
			}
			msgs := e.wc.Messages()
			if got := msgs[len(msgs)-1].Content; got != c.msg.Content {
				t.Fatalf("delivered %d bytes, sent %d: WeCom cut the text", len(got), len(c.msg.Content))
			}
		})
	}
}

func TestTokenCacheAndRefresh(t *testing.T) {
	e := newEnv(t)
	app := e.wc.NewApp()
	var users []push.Target
	bot := e.Bot(t, app.Config(e.wc), nil)
	for i := 0; i < 8; i++ {
		id := fmt.Sprintf("user%d", i)
		e.wc.AddUser(app.CorpID, id, fake.WeComActive)
		users = append(users, e.Target(t, bot, push.TargetUser, id))
	}
	// Concurrent first sends share one token fetch.
	e.wc.Fail(fake.WeComOpToken, fake.WeComFault{Delay: 200 * time.Millisecond})
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	res, err := e.H.Engine.SendBatch(ctx, push.AccountPrincipal(e.Account.ID), push.BatchRequest{BotID: bot.ID, TargetIDs: ids, Message: text("all")})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range res.Jobs {
		if j.State != push.StateSucceeded {
			t.Fatalf("batch job %s: %s", j.State, j.Error)
		}
	}
	if n := e.wc.TokenFetches(); n != 1 {
		t.Fatalf("%d token fetches for 8 concurrent sends, want 1", n)
	}

	steps := []struct {
		name        string
		before      func()
		wantFetches int // total token fetches after the step
		wantSends   int // send requests of the step
	}{
		{"cached token reused", func() {}, 1, 1},
		{"expired token refreshed and the send retried once", e.wc.ExpireTokens, 2, 2},
		{"token refused as invalid", func() {
			e.wc.Fail(fake.WeComOpSend, fake.WeComFault{ErrCode: 40014, ErrMsg: "invalid access_token"})
		}, 3, 2},
		{"refreshed early, before it expires", func() { e.H.Clock.Advance(7200*time.Second - time.Minute) }, 4, 1},
		{"token endpoint busy, retried", func() {
			e.wc.ExpireTokens()
			e.H.Clock.Advance(7200 * time.Second)
			e.wc.Fail(fake.WeComOpToken, fake.WeComFault{ErrCode: -1, ErrMsg: "system busy"})
		}, 6, 1},
	}
	// The steps build on each other, so they are one test, not subtests
	// that -run could pick alone.
	for _, s := range steps {
		s.before()
		sends, delivered := e.wc.Requests(fake.WeComOpSend), len(e.wc.Messages())
		j := e.Send(t, bot, users[0], text(s.name))
		if j.State != push.StateSucceeded {
			t.Fatalf("%s: job %s: %s", s.name, j.State, j.Error)
		}
		if n := e.wc.TokenFetches(); n != s.wantFetches {
			t.Errorf("%s: token fetches %d, want %d", s.name, n, s.wantFetches)
		}
		if n := e.wc.Requests(fake.WeComOpSend) - sends; n != s.wantSends {
			t.Errorf("%s: send requests %d, want %d", s.name, n, s.wantSends)
		}
		if n := len(e.wc.Messages()) - delivered; n != 1 {
			t.Errorf("%s: delivered %d messages, want 1", s.name, n)
		}
	}
	t.Run("wrong secret fails without echoing it", func(t *testing.T) {
		bad := app
		bad.Secret = "WrongSecret_0123456789abcdefghij"
		b := e.Bot(t, bad.Config(e.wc), nil)
		tg := e.Target(t, b, push.TargetUser, "user0")
		j := e.Send(t, b, tg, text("x"))
		if j.State != push.StateFailed || !strings.Contains(j.Error, "(code 40001)") || !strings.Contains(j.Error, "check corp_id and corp_secret") {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
		if strings.Contains(j.Error, bad.Secret) {
			t.Fatalf("error echoes the secret: %s", j.Error)
		}
	})
}

// TestErrorClasses: definitive answers fail the job with WeCom's code and
// text; retryable ones are retried and delivered; uncertain ones leave the
// job uncertain and are never sent again.
func TestErrorClasses(t *testing.T) {
	e := newEnv(t)
	app := e.wc.NewApp()
	e.wc.AddUser(app.CorpID, "ok", fake.WeComActive)
	e.wc.AddUser(app.CorpID, "nolicense", fake.WeComUnlicensed)
	bot := e.Bot(t, app.Config(e.wc), nil)
	robotKey := e.wc.NewRobot()
	robot := e.Bot(t, e.wc.RobotConfig(robotKey), nil)
	robotTarget := e.Target(t, robot, push.TargetGroup, "robot")
	deadRobot := e.Bot(t, e.wc.RobotConfig("0000dead-0000-4bc4-97a0-000000000000"), nil)
	deadTarget := e.Target(t, deadRobot, push.TargetGroup, "robot")
	e.Images.Add("/page.html", []byte("<html>not an image</html>"), "text/html")
	e.Images.Add("/anim.gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "image/gif")
	ok := e.Target(t, bot, push.TargetUser, "ok")
	stranger := e.Target(t, bot, push.TargetUser, "stranger")
	nolicense := e.Target(t, bot, push.TargetUser, "nolicense")

	cases := []struct {
		name      string
		bot       push.Bot
		target    push.Target
		msg       push.Message
		faults    map[string][]fake.WeComFault
		state     push.State
		errHas    []string
		delivered int // messages the fake delivered
		sends     int // send requests the fake saw
		uploads   int
	}{
		{name: "unknown member", bot: bot, target: stranger, msg: text("x"), state: push.StateFailed,
			errHas: []string{"(code 81013)", "user & party & tag all invalid"}, sends: 1},
		{name: "errcode 0 naming the member in invaliduser", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{InvalidUser: true}}},
			state:  push.StateFailed, errHas: []string{"invaliduser", `"ok"`}, sends: 1},
		{name: "errcode 0 naming the member in unlicenseduser", bot: bot, target: nolicense, msg: text("x"),
			state: push.StateFailed, errHas: []string{"unlicenseduser"}, sends: 1},
		{name: "invalid agentid", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{ErrCode: 40056, ErrMsg: "invalid agentid"}}},
			state:  push.StateFailed, errHas: []string{"(code 40056)", "invalid agentid", "check agent_id"}, sends: 1},
		{name: "IP not allowed", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{ErrCode: 60020, ErrMsg: "not allow to access from your ip"}}},
			state:  push.StateFailed, errHas: []string{"(code 60020)", "trusted IPs"}, sends: 1},
		{name: "a freshly issued token refused again: failed, not retried", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{ErrCode: 40014, ErrMsg: "invalid access_token"}, {ErrCode: 40014, ErrMsg: "invalid access_token"}}},
			state:  push.StateFailed, errHas: []string{"(code 40014)", "freshly issued", "token_base"}, sends: 2},
		{name: "system busy is retried", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{ErrCode: -1, ErrMsg: "system busy"}}},
			state:  push.StateSucceeded, delivered: 1, sends: 2},
		{name: "concurrency limit is retried", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{ErrCode: 45033, ErrMsg: "api concurrent out of limit"}}},
			state:  push.StateSucceeded, delivered: 1, sends: 2},
		{name: "connection dropped before WeCom acted", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{Drop: true}}},
			state:  push.StateUncertain, errHas: []string{"may have received"}, sends: 1},
		{name: "connection dropped after delivery", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{Drop: true, Process: true}}},
			state:  push.StateUncertain, delivered: 1, sends: 1},
		{name: "gateway 502", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{Status: 502, Body: "<html>Bad Gateway</html>"}}},
			state:  push.StateUncertain, errHas: []string{"HTTP 502"}, sends: 1},
		{name: "unreadable 200", bot: bot, target: ok, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{Status: 200, Body: "<html>maintenance</html>"}}},
			state:  push.StateUncertain, errHas: []string{"could not be read"}, sends: 1},
		{name: "upload dropped is retried: no message was sent", bot: bot, target: ok, msg: image(e.Images.URL("/chart.png"), ""),
			faults: map[string][]fake.WeComFault{"upload": {{Drop: true, Process: true}}},
			state:  push.StateSucceeded, delivered: 1, sends: 1, uploads: 2},
		{name: "upload refused", bot: bot, target: ok, msg: image(e.Images.URL("/chart.png"), ""),
			faults: map[string][]fake.WeComFault{"upload": {{ErrCode: 40009, ErrMsg: "invalid image size"}}},
			state:  push.StateFailed, errHas: []string{"(code 40009)"}, uploads: 1},
		{name: "image URL not found", bot: bot, target: ok, msg: image(e.Images.URL("/missing.png"), ""),
			state: push.StateFailed, errHas: []string{"HTTP 404", "image_fetch"}},
		{name: "image URL not an image", bot: bot, target: ok, msg: image(e.Images.URL("/page.html"), ""),
			state: push.StateFailed, errHas: []string{"did not return an image"}},
		{name: "gif refused", bot: bot, target: ok, msg: image(e.Images.URL("/anim.gif"), ""),
			state: push.StateFailed, errHas: []string{"does not take image/gif"}},
		{name: "robot: bad webhook key", bot: deadRobot, target: deadTarget, msg: text("x"),
			state: push.StateFailed, errHas: []string{"(code 93000)", "invalid webhook url", "check webhook_key"}, sends: 1},
		{name: "robot: busy is retried", bot: robot, target: robotTarget, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{ErrCode: -1, ErrMsg: "system busy"}}},
			state:  push.StateSucceeded, delivered: 1, sends: 2},
		{name: "robot: dropped after delivery", bot: robot, target: robotTarget, msg: text("x"),
			faults: map[string][]fake.WeComFault{"send": {{Drop: true, Process: true}}},
			state:  push.StateUncertain, delivered: 1, sends: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for op, fs := range c.faults {
				e.wc.Fail(op, fs...)
			}
			sends, delivered, uploads := e.wc.Requests(fake.WeComOpSend), len(e.wc.Messages()), e.wc.Requests(fake.WeComOpUpload)
			j := e.Send(t, c.bot, c.target, c.msg)
			if j.State != c.state {
				t.Fatalf("job %s (%s), want %s", j.State, j.Error, c.state)
			}
			for _, s := range c.errHas {
				if !strings.Contains(j.Error, s) {
					t.Errorf("job error %q lacks %q", j.Error, s)
				}
			}
			// Wait a moment: nothing is sent again later either.
			time.Sleep(100 * time.Millisecond)
			got := []int{len(e.wc.Messages()) - delivered, e.wc.Requests(fake.WeComOpSend) - sends, e.wc.Requests(fake.WeComOpUpload) - uploads}
			if diff := cmp.Diff([]int{c.delivered, c.sends, c.uploads}, got); diff != "" {
				t.Errorf("delivered, send requests, uploads (-want +got):\n%s", diff)
			}
			for _, secret := range append(e.wc.IssuedTokens(), app.Secret, robotKey, "0000dead-0000-4bc4-97a0-000000000000") {
				if strings.Contains(j.Error, secret) {
					t.Fatalf("job error carries a credential: %s", j.Error)
				}
			}
		})
	}
}

// TestSendTimeout: no answer within the attempt's time is uncertain, and
// the message is never sent again.
func TestSendTimeout(t *testing.T) {
	e := newEnv(t, testkit.WithLimits(push.Limits{AttemptTimeout: 400 * time.Millisecond}))
	app := e.wc.NewApp()
	e.wc.AddUser(app.CorpID, "u", fake.WeComActive)
	bot := e.Bot(t, app.Config(e.wc), nil)
	tg := e.Target(t, bot, push.TargetUser, "u")
	e.Send(t, bot, tg, text("warm the token cache"))
	e.wc.Fail(fake.WeComOpSend, fake.WeComFault{Delay: 2 * time.Second})
	j := e.Send(t, bot, tg, text("slow"))
	if j.State != push.StateUncertain || !strings.Contains(j.Error, "no answer after the request was sent") {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	time.Sleep(2500 * time.Millisecond)
	if n := e.wc.Requests(fake.WeComOpSend); n != 2 {
		t.Fatalf("%d send requests, want 2 (never resent)", n)
	}
}

// TestDuplicateCheck: with duplicate_check_interval set, sends to members
// carry enable_duplicate_check and the interval, and WeCom does not
// deliver an identical request again within it (even from another job).
func TestDuplicateCheck(t *testing.T) {
	e := newEnv(t)
	app := e.wc.NewApp()
	e.wc.AddUser(app.CorpID, "u", fake.WeComActive)
	checked := e.Bot(t, app.Config(e.wc), map[string]any{"duplicate_check_interval": 600})
	plain := e.Bot(t, app.Config(e.wc), nil)
	tc, tp := e.Target(t, checked, push.TargetUser, "u"), e.Target(t, plain, push.TargetUser, "u")

	first := e.Send(t, checked, tc, text("disk full"))
	second := e.Send(t, checked, tc, text("disk full"))
	third := e.Send(t, checked, tc, text("disk ok"))
	for _, j := range []push.Job{first, second, third} {
		if j.State != push.StateSucceeded {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
	}
	msgs := e.wc.Messages()
	if len(msgs) != 2 || e.wc.Suppressed() != 1 || second.PlatformIndex != first.PlatformIndex {
		t.Fatalf("delivered %d, suppressed %d, msgids %q %q", len(msgs), e.wc.Suppressed(), first.PlatformIndex, second.PlatformIndex)
	}
	if msgs[0].DuplicateCheck != 1 || msgs[0].DuplicateInterval != 600 {
		t.Fatalf("request carried enable_duplicate_check=%d interval=%d", msgs[0].DuplicateCheck, msgs[0].DuplicateInterval)
	}
	// Without the option, identical messages are all delivered.
	e.Send(t, plain, tp, text("same"))
	e.Send(t, plain, tp, text("same"))
	msgs = e.wc.Messages()
	if len(msgs) != 4 || msgs[3].DuplicateCheck != 0 {
		t.Fatalf("without the duplicate check: %d delivered, check=%d", len(msgs), msgs[len(msgs)-1].DuplicateCheck)
	}
}

// TestConcurrentBotsShareNothing: two apps of two corps get their own
// tokens, concurrently.
func TestConcurrentBotsShareNothing(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		app := e.wc.NewApp()
		e.wc.AddUser(app.CorpID, "u", fake.WeComActive)
		bot := e.Bot(t, app.Config(e.wc), nil)
		tg := e.Target(t, bot, push.TargetUser, "u")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				res, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: bot.ID, TargetID: tg.ID, Message: text(fmt.Sprint(k))})
				if err != nil || res.Jobs[0].State != push.StateSucceeded {
					t.Errorf("send: %v %+v", err, res.Jobs)
				}
			}
		}()
	}
	wg.Wait()
	if n := e.wc.TokenFetches(); n != 2 {
		t.Fatalf("%d token fetches for two apps, want 2", n)
	}
}
