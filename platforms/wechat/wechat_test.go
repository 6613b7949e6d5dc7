package wechat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

// env is a Herald in memory with one WeChat bot on a fake WeChat.
type env struct {
	*testkit.PlatformEnv
	f             *fake.WeChat
	bot           push.Bot
	appID, secret string
	seq           int
}

// clockTo advances the engine's and the provider's clock to when(now).
func (e *env) clockTo(when func(now time.Time) time.Time) {
	now := e.H.Clock.Now()
	e.H.Clock.Advance(when(now).Sub(now))
}

func newEnv(t *testing.T, opts ...testkit.Option) *env {
	t.Helper()
	e := &env{PlatformEnv: testkit.NewPlatformEnv(t, "wechat", opts...), f: fake.NewWeChat(t)}
	e.appID, e.secret = e.f.NewApp()
	e.bot = e.newBot(t, string(e.f.BotConfig(e.appID, e.secret)))
	return e
}

func (e *env) newBot(t *testing.T, cfg string) push.Bot {
	t.Helper()
	return e.Bot(t, []byte(cfg), nil)
}

// user binds a fresh follower of the account.
func (e *env) user(t *testing.T) push.Target {
	t.Helper()
	return e.bind(t, e.bot, true)
}

func (e *env) bind(t *testing.T, bot push.Bot, follow bool) push.Target {
	t.Helper()
	e.seq++
	openid := fmt.Sprintf("oLVPpjqs9BhvzwPj5A-vTYA%05d", e.seq)
	if follow {
		e.f.AddFollower(e.appID, openid)
	}
	return e.Target(t, bot, push.TargetUser, openid)
}

func (e *env) send(t *testing.T, tg push.Target, m push.Message) push.Job {
	t.Helper()
	return e.Send(t, e.bot, tg, m)
}

func text(s string) push.Message { return push.Message{Type: push.MsgTypeText, Content: s} }

func TestSendFormats(t *testing.T) {
	e := newEnv(t)
	images := fake.NewImages(t)
	png, jpg, gif := fake.PNG(1), fake.JPEG(2), fake.GIF(3)
	pngURL := images.Add("/a.png", png, "image/png")
	jpgURL := images.Add("/b.jpg", jpg, "image/jpeg")
	// A wrong declared type: the bytes decide.
	gifURL := images.Add("/c", gif, "application/octet-stream")

	type sent struct {
		MsgType, Content, SHA256, Filename, ContentType string
	}
	tests := []struct {
		name string
		msg  push.Message
		want []sent
	}{
		{name: "text", msg: text("hello wechat"), want: []sent{{MsgType: "text", Content: "hello wechat"}}},
		{name: "text with markup characters and CJK", msg: text(`a < b && "c" > d 你好`),
			want: []sent{{MsgType: "text", Content: `a < b && "c" > d 你好`}}},
		{name: "markdown as plain text with links", msg: push.Message{Type: push.MsgTypeMarkdown, Content: "# Deploy\n**api** is [live](https://example.com/d?a=1&b=2)\n\n- 3 services"},
			want: []sent{{MsgType: "text", Content: "Deploy\n\napi is <a href=\"https://example.com/d?a=1&b=2\">live</a>\n\n• 3 services"}}},
		{name: "png image", msg: push.Message{Type: push.MsgTypeImage, ImageURL: pngURL},
			want: []sent{{MsgType: "image", SHA256: fake.SHA256(png), Filename: "image.png", ContentType: "image/png"}}},
		{name: "jpeg image", msg: push.Message{Type: push.MsgTypeImage, ImageURL: jpgURL},
			want: []sent{{MsgType: "image", SHA256: fake.SHA256(jpg), Filename: "image.jpg", ContentType: "image/jpeg"}}},
		{name: "gif image with a wrong declared type", msg: push.Message{Type: push.MsgTypeImage, ImageURL: gifURL},
			want: []sent{{MsgType: "image", SHA256: fake.SHA256(gif), Filename: "image.gif", ContentType: "image/gif"}}},
		{name: "image with a caption: the caption's text, then the image", msg: push.Message{Type: push.MsgTypeImage, ImageURL: pngURL, Content: "today's chart"},
			want: []sent{{MsgType: "text", Content: "today's chart"}, {MsgType: "image", SHA256: fake.SHA256(png), Filename: "image.png", ContentType: "image/png"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := e.user(t)
			before := len(e.f.Messages())
			j := e.send(t, tg, tc.msg)
			if j.State != push.StateSucceeded || j.PlatformIndex != "" {
				t.Fatalf("job %s %q (platformIndex %q), want succeeded without an index", j.State, j.Error, j.PlatformIndex)
			}
			var got []sent
			for _, m := range e.f.Messages()[before:] {
				if m.ToUser != tg.Address || m.AppID != e.appID {
					t.Fatalf("message to %s of %s, want %s of %s", m.ToUser, m.AppID, tg.Address, e.appID)
				}
				s := sent{MsgType: m.MsgType, Content: m.Content}
				if m.Media != nil {
					s.SHA256, s.Filename, s.ContentType = m.Media.SHA256, m.Media.Filename, m.Media.ContentType
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupTargetRefusedAtBind(t *testing.T) {
	e := newEnv(t)
	_, err := e.H.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: e.bot.ID, Type: push.TargetGroup, Address: "oLVPpjqs9BhvzwPj5A-vTYAX3GLc"})
	if !push.IsKind(err, push.Invalid) || !strings.Contains(err.Error(), "wechat bots cannot send to a group target") {
		t.Fatalf("binding a group = %v, want Invalid naming wechat and groups", err)
	}
}

func TestLimitsBeforeCharging(t *testing.T) {
	e := newEnv(t, testkit.WithPoints(push.Points{Enabled: true}))
	tg := e.user(t)
	images := fake.NewImages(t)
	pngURL := images.Add("/a.png", fake.PNG(1), "image/png")
	cjk := strings.Repeat("好", 683) // 2049 bytes in 683 characters
	tests := []struct {
		name string
		msg  push.Message
		ok   bool
	}{
		{"2048 bytes of CJK text", text(strings.Repeat("好", 682) + "ab"), true},
		{"2049 bytes of CJK text", text(cjk), false},
		{"markdown rendering to more than 2048 bytes", push.Message{Type: push.MsgTypeMarkdown, Content: "**" + cjk + "**"}, false},
		{"markdown whose markup makes it long but whose text fits", push.Message{Type: push.MsgTypeMarkdown, Content: "**" + strings.Repeat("a", 1000) + "** _" + strings.Repeat("b", 990) + "_"}, true},
		{"caption over 2048 bytes", push.Message{Type: push.MsgTypeImage, ImageURL: pngURL, Content: cjk}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, jobs := e.H.Balance(t, e.Account.ID), e.H.CountJobs(t)
			res, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: e.bot.ID, TargetID: tg.ID, Message: tc.msg})
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if j := e.Settled(t, res.Jobs[0].ID); j.State != push.StateSucceeded {
					t.Fatalf("job %s %q", j.State, j.Error)
				}
				return
			}
			if !push.IsKind(err, push.Invalid) || push.ReasonOf(err) != "content_too_long" || !strings.Contains(err.Error(), "2048 bytes") {
				t.Fatalf("send = %v, want Invalid content_too_long naming 2048 bytes", err)
			}
			if e.H.Balance(t, e.Account.ID) != before || e.H.CountJobs(t) != jobs {
				t.Fatal("a refused message was charged or queued")
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	images := fake.NewImages(t)
	png := fake.PNG(4)
	imgURL := images.Add("/d.png", png, "image/png")
	notImage := images.Add("/e.txt", []byte("just text, not a picture"), "text/plain")
	tests := []struct {
		name     string
		msg      push.Message
		prepare  func(t *testing.T, e *env, tg push.Target)
		faults   []fake.WeChatFault
		drop     string
		limits   push.Limits
		delay    time.Duration
		state    push.State
		sends    int
		uploads  int
		contains []string
	}{
		{name: "definitive: outside the 48-hour window", msg: text("x"),
			prepare: func(t *testing.T, e *env, tg push.Target) {
				e.f.UserWrote(e.appID, tg.Address, time.Now().Add(-49*time.Hour))
			},
			state: push.StateFailed, sends: 1, contains: []string{"45015", "48 hours"}},
		{name: "definitive: reply quota used up", msg: text("x"),
			prepare: func(t *testing.T, e *env, tg push.Target) {
				e.f.SetReplyQuota(1)
				if j := e.send(t, tg, text("first")); j.State != push.StateSucceeded {
					t.Fatalf("first send: %s", j.Error)
				}
			},
			state: push.StateFailed, sends: 2, contains: []string{"45047", "out of response count limit", "write to the Official Account again"}},
		{name: "definitive: not following", msg: text("x"),
			prepare: func(t *testing.T, e *env, tg push.Target) { e.f.Unfollow(e.appID, tg.Address) },
			state:   push.StateFailed, sends: 1, contains: []string{"43004", "does not follow"}},
		{name: "definitive: unauthorized API", msg: text("x"),
			faults: []fake.WeChatFault{{ErrCode: 48001, ErrMsg: "api unauthorized"}},
			state:  push.StateFailed, sends: 1, contains: []string{"48001", "api unauthorized"}},
		{name: "definitive: daily quota, which outlasts the send window", msg: text("x"),
			// The quota resets at midnight China time: a send in the day's
			// last minute (the send window) would be retried. The clock
			// starts the send an hour into a China day.
			prepare: func(t *testing.T, e *env, _ push.Target) {
				e.clockTo(func(now time.Time) time.Time {
					china := now.In(time.FixedZone("CST", 8*60*60))
					y, m, d := china.Date()
					return time.Date(y, m, d+1, 1, 0, 0, 0, china.Location())
				})
			},
			faults: []fake.WeChatFault{{ErrCode: 45009, ErrMsg: "reach max api daily quota limit"}},
			state:  push.StateFailed, sends: 1, contains: []string{"45009", "daily API quota", "nothing was delivered"}},
		{name: "definitive: minute quota, which outlasts a short send window", msg: text("x"), limits: push.Limits{SendWindow: 50 * time.Millisecond},
			// The quota resets at the next minute: a send in a minute's
			// last 50 ms would wait that little and be retried. The clock
			// starts the send a second into a minute.
			prepare: func(t *testing.T, e *env, _ push.Target) {
				e.clockTo(func(now time.Time) time.Time { return now.Truncate(time.Minute).Add(time.Minute + time.Second) })
			},
			faults: []fake.WeChatFault{{ErrCode: 45011, ErrMsg: "api minute-quota reach limit"}},
			state:  push.StateFailed, sends: 1, contains: []string{"45011", "per-minute API quota"}},
		{name: "definitive: upload refused, nothing sent", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL},
			faults: []fake.WeChatFault{{On: "upload", ErrCode: 40009, ErrMsg: "invalid image size"}},
			state:  push.StateFailed, uploads: 1, contains: []string{"40009", "uploading the image"}},
		{name: "definitive: not an image, nothing uploaded", msg: push.Message{Type: push.MsgTypeImage, ImageURL: notImage},
			state: push.StateFailed, contains: []string{"did not return an image"}},
		{name: "retryable: system busy, then delivered", msg: text("x"),
			faults: []fake.WeChatFault{{ErrCode: -1, ErrMsg: "system error"}},
			state:  push.StateSucceeded, sends: 2},
		{name: "retryable: upload answer lost, then delivered", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL},
			drop: "upload", state: push.StateSucceeded, sends: 1, uploads: 2},
		{name: "retryable: upload busy, then delivered", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL},
			faults: []fake.WeChatFault{{On: "upload", ErrCode: -1, ErrMsg: "system error"}},
			state:  push.StateSucceeded, sends: 1, uploads: 2},
		{name: "uncertain: a 200 that is not JSON", msg: text("x"),
			faults: []fake.WeChatFault{{Body: "<html>ok</html>"}},
			state:  push.StateUncertain, sends: 1, contains: []string{"could not be read"}},
		{name: "uncertain: a gateway's 502", msg: text("x"),
			faults: []fake.WeChatFault{{Status: 502, Body: "<html>502 Bad Gateway</html>"}},
			state:  push.StateUncertain, sends: 1, contains: []string{"502"}},
		{name: "uncertain: connection dropped after the request", msg: text("x"),
			drop: "send", state: push.StateUncertain, sends: 1},
		{name: "uncertain: no answer in time", msg: text("x"), delay: 2 * time.Second, limits: push.Limits{AttemptTimeout: 300 * time.Millisecond},
			state: push.StateUncertain, sends: 1, contains: []string{"no answer"}},
		{name: "caption delivered, image refused: failed, not retried", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL, Content: "caption"},
			faults: []fake.WeChatFault{{ErrCode: -1, ErrMsg: "system error", After: 1}},
			state:  push.StateFailed, sends: 2, uploads: 1, contains: []string{"caption was delivered", "image was not", "-1"}},
		{name: "caption delivered, image answer lost: uncertain", msg: push.Message{Type: push.MsgTypeImage, ImageURL: imgURL, Content: "caption"},
			faults: []fake.WeChatFault{{Status: 504, Body: "gateway timeout", After: 1}},
			state:  push.StateUncertain, sends: 2, uploads: 1, contains: []string{"caption was delivered"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, testkit.WithLimits(tc.limits))
			tg := e.user(t)
			if tc.prepare != nil {
				tc.prepare(t, e, tg)
			}
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
			if n := e.f.Requests("send"); n != tc.sends {
				t.Errorf("%d send requests, want %d", n, tc.sends)
			}
			if n := e.f.Requests("upload"); n != tc.uploads {
				t.Errorf("%d upload requests, want %d", n, tc.uploads)
			}
		})
	}
}

func TestTokenCachedAndSingleFlight(t *testing.T) {
	e := newEnv(t)
	var ids []int64
	for i := 0; i < 8; i++ {
		ids = append(ids, e.user(t).ID)
	}
	res, err := e.H.Engine.SendBatch(ctx, push.AccountPrincipal(e.Account.ID), push.BatchRequest{BotID: e.bot.ID, TargetIDs: ids, Message: text("all")})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range res.Jobs {
		if j := e.Settled(t, j.ID); j.State != push.StateSucceeded {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
	}
	images := fake.NewImages(t)
	url := images.Add("/p.png", fake.PNG(9), "image/png")
	tg := e.user(t)
	for i := 0; i < 3; i++ {
		if j := e.send(t, tg, push.Message{Type: push.MsgTypeImage, ImageURL: url}); j.State != push.StateSucceeded {
			t.Fatalf("job %s: %s", j.State, j.Error)
		}
	}
	if n := e.f.TokenFetches(); n != 1 {
		t.Fatalf("%d token fetches for 8 texts and 3 images, want 1", n)
	}
}

func TestTokenRefresh(t *testing.T) {
	tests := []struct {
		name       string
		tokenAPI   string
		tokenFault *fake.WeChatFault
		state      push.State
		fetches    int
		sends      int
		contains   []string
	}{
		{name: "stable token expired: refreshed once, then delivered", state: push.StateSucceeded, fetches: 2, sends: 3},
		{name: "classic token expired: refreshed once, then delivered", tokenAPI: "classic", state: push.StateSucceeded, fetches: 2, sends: 3},
		{name: "refresh refused: definitive", state: push.StateFailed, fetches: 1, sends: 2,
			tokenFault: &fake.WeChatFault{On: "token", ErrCode: 40125, ErrMsg: "invalid appsecret"},
			contains:   []string{"40125", "invalid appsecret", "app_id and app_secret"}},
		{name: "refresh busy: retried, then delivered", state: push.StateSucceeded, fetches: 2, sends: 3,
			tokenFault: &fake.WeChatFault{On: "token", ErrCode: -1, ErrMsg: "system error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			bot := e.bot
			if tc.tokenAPI != "" {
				bot = e.newBot(t, `{"app_id":"`+e.appID+`","app_secret":"`+e.secret+`","api_base":"`+e.f.URL()+`","token_api":"`+tc.tokenAPI+`"}`)
			}
			tg := e.bind(t, bot, true)
			if j := e.Send(t, bot, tg, text("first")); j.State != push.StateSucceeded {
				t.Fatalf("first send: %s %s", j.State, j.Error)
			}
			e.f.ExpireTokens()
			if tc.tokenFault != nil {
				e.f.Fail(*tc.tokenFault)
			}
			j := e.Send(t, bot, tg, text("second"))
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
			if n := e.f.Requests("send"); n != tc.sends {
				t.Errorf("%d send requests, want %d", n, tc.sends)
			}
		})
	}
}

func TestNoCredentialInErrors(t *testing.T) {
	e := newEnv(t, testkit.WithLimits(push.Limits{SendWindow: 300 * time.Millisecond}))
	tg := e.user(t)
	stranger := e.bind(t, e.bot, false)
	var errs []string
	errs = append(errs, e.send(t, stranger, text("not a follower")).Error)
	e.f.Fail(fake.WeChatFault{ErrCode: 40001, ErrMsg: "invalid credential"}, fake.WeChatFault{ErrCode: 40001, ErrMsg: "invalid credential"})
	errs = append(errs, e.send(t, tg, text("token refused twice")).Error)
	e.f.DropNext("send", 1)
	errs = append(errs, e.send(t, tg, text("dropped")).Error)
	e.f.ExpireTokens()
	e.f.Fail(fake.WeChatFault{On: "token", ErrCode: 40125, ErrMsg: "invalid appsecret"})
	errs = append(errs, e.send(t, tg, text("refresh refused")).Error)
	// A classic token request carries the secret in its URL; a transport
	// failure there must not show it.
	classic := e.newBot(t, `{"app_id":"`+e.appID+`","app_secret":"`+e.secret+`","api_base":"http://127.0.0.1:1","token_api":"classic"}`)
	other := e.bind(t, classic, true)
	res, err := e.H.Engine.Send(ctx, push.AccountPrincipal(e.Account.ID), push.SendRequest{BotID: classic.ID, TargetID: other.ID, Message: text("x")})
	if err != nil {
		t.Fatal(err)
	}
	errs = append(errs, e.Settled(t, res.Jobs[0].ID).Error)
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
