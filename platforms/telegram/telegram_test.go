package telegram_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/telegram"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

func send(t *testing.T, h *testkit.Herald, f testkit.Fixture, tg push.Target, m push.Message) push.Job {
	t.Helper()
	res, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: tg.ID, Message: m})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	j := res.Jobs[0]
	if !j.State.Settled() {
		t.Fatalf("job still %s after the sync wait", j.State)
	}
	return j
}

func sum(b []byte) string { s := sha256.Sum256(b); return fmt.Sprintf("%x", s) }

// got is what a test compares of a message the fake accepted.
type got struct {
	Method, Chat, Text, ParseMode, Photo string
}

func TestSends(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	group := h.Target(t, f.Bot.ID, push.TargetGroup, "")
	channel := h.Target(t, f.Bot.ID, push.TargetGroup, "@herald_news")
	user := f.Target
	cases := []struct {
		name   string
		target push.Target
		msg    push.Message
		want   got
	}{
		{"text to a user", user, push.Message{Type: push.MsgTypeText, Content: "plain <b>not bold</b> & more"},
			got{"sendMessage", user.Address, "plain <b>not bold</b> & more", "", ""}},
		{"markdown to a user", user, push.Message{Type: push.MsgTypeMarkdown, Content: "# Deploy\n**v42** is `live` — see [logs](https://e.com/l?a=1&b=2)"},
			got{"sendMessage", user.Address, `<b>Deploy</b>` + "\n\n" + `<b>v42</b> is <code>live</code> — see <a href="https://e.com/l?a=1&amp;b=2">logs</a>`, "HTML", ""}},
		{"image to a user", user, push.Message{Type: push.MsgTypeImage, ImageURL: "https://example.com/chart.png"},
			got{"sendPhoto", user.Address, "", "", "https://example.com/chart.png"}},
		{"image with a caption", user, push.Message{Type: push.MsgTypeImage, ImageURL: "https://example.com/chart.png", Content: "Today's <chart>"},
			got{"sendPhoto", user.Address, "Today's <chart>", "", "https://example.com/chart.png"}},
		{"text to a group", group, push.Message{Type: push.MsgTypeText, Content: "hello group"},
			got{"sendMessage", group.Address, "hello group", "", ""}},
		{"markdown to a group", group, push.Message{Type: push.MsgTypeMarkdown, Content: "> quoted ||spoiler||"},
			got{"sendMessage", group.Address, "<blockquote>quoted <tg-spoiler>spoiler</tg-spoiler></blockquote>", "HTML", ""}},
		{"image to a channel", channel, push.Message{Type: push.MsgTypeImage, ImageURL: "https://example.com/c.jpg"},
			got{"sendPhoto", channel.Address, "", "", "https://example.com/c.jpg"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(h.Telegram.Messages())
			j := send(t, h, f, c.target, c.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			msgs := h.Telegram.Messages()[before:]
			if len(msgs) != 1 {
				t.Fatalf("fake accepted %d messages", len(msgs))
			}
			m := msgs[0]
			if diff := cmp.Diff(c.want, got{m.Method, m.ChatID, m.Text, m.ParseMode, m.Photo}); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
			if m.EntityProblem != "" {
				t.Errorf("Telegram would drop formatting: %s", m.EntityProblem)
			}
			// message_id is unique per chat only: the index names the chat.
			if want := fmt.Sprintf("%s:%d", c.target.Address, m.MessageID); j.PlatformIndex != want {
				t.Errorf("platformIndex %q, want %q", j.PlatformIndex, want)
			}
		})
	}
}

// TestPhotoFallback: when Telegram cannot fetch a photo's URL (too large,
// wrong content type), Herald downloads the image and uploads it.
func TestPhotoFallback(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	h.Telegram.FetchPhotos()
	img := fake.NewImages(t)
	big := fake.LargePNG(6 << 20)
	img.Add("/big.png", big, "image/png")
	img.Add("/mislabelled.png", img.Data("/chart.png"), "application/octet-stream")
	cases := []struct {
		name      string
		url       string
		state     push.State
		byURL     bool
		data      []byte
		errHas    []string
		fetches   int // downloads from the image host (by Telegram and by Herald)
		requested int // sendPhoto requests
	}{
		{"fetched by Telegram", img.URL("/chart.png"), push.StateSucceeded, true, img.Data("/chart.png"), nil, 1, 1},
		{"over Telegram's 5 MB by URL: uploaded", img.URL("/big.png"), push.StateSucceeded, false, big, nil, 2, 2},
		{"wrong content type: uploaded", img.URL("/mislabelled.png"), push.StateSucceeded, false, img.Data("/chart.png"), nil, 2, 2},
		{"missing everywhere", img.URL("/missing.png"), push.StateFailed, false, nil,
			[]string{"failed to get HTTP URL content", "downloading the image to upload it failed", "HTTP 404"}, 2, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.url[strings.LastIndex(c.url, "/"):]
			hits, reqs, before := img.Fetches(path), h.Telegram.Requests(), len(h.Telegram.Messages())
			j := send(t, h, f, f.Target, push.Message{Type: push.MsgTypeImage, ImageURL: c.url, Content: "cap"})
			if j.State != c.state {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			for _, s := range c.errHas {
				if !strings.Contains(j.Error, s) {
					t.Errorf("error %q lacks %q", j.Error, s)
				}
			}
			if n := img.Fetches(path) - hits; n != c.fetches {
				t.Errorf("%d downloads, want %d", n, c.fetches)
			}
			if n := h.Telegram.Requests() - reqs; n != c.requested {
				t.Errorf("%d sendPhoto requests, want %d", n, c.requested)
			}
			msgs := h.Telegram.Messages()[before:]
			if c.state != push.StateSucceeded {
				if len(msgs) != 0 {
					t.Fatalf("accepted %d messages", len(msgs))
				}
				return
			}
			if len(msgs) != 1 || (msgs[0].Photo != "") != c.byURL || sum(msgs[0].PhotoData) != sum(c.data) || msgs[0].Text != "cap" {
				t.Fatalf("accepted %d messages; by URL %v; bytes match %v", len(msgs), len(msgs) > 0 && msgs[0].Photo != "", len(msgs) > 0 && sum(msgs[0].PhotoData) == sum(c.data))
			}
		})
	}
}

func TestErrors(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	blocked := h.Target(t, f.Bot.ID, push.TargetUser, "")
	h.Telegram.BlockChat(blocked.Address)
	oldGroup := h.Target(t, f.Bot.ID, push.TargetGroup, "-4242")
	h.Telegram.MigrateChat(oldGroup.Address, -1001234567890)
	unknown, err := h.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: f.Bot.ID, Type: push.TargetUser, Address: "99999"})
	if err != nil {
		t.Fatal(err)
	}
	a := h.Account(t, "other")
	badToken := "123456:" + strings.Repeat("x", 35)
	cfg, _ := json.Marshal(map[string]string{"token": badToken, "api_base": h.Telegram.URL()})
	badBot, err := h.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: a.ID, Platform: "telegram", Name: "bad", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	badTarget := h.Target(t, badBot.ID, push.TargetUser, "")
	badFixture := testkit.Fixture{Account: a, Bot: badBot}

	cases := []struct {
		name     string
		fx       testkit.Fixture
		target   push.Target
		fault    *fake.TelegramFault
		drop     bool
		state    push.State
		errHas   []string
		requests int
		accepted int
		minTime  time.Duration
	}{
		{name: "chat not found", fx: f, target: unknown, state: push.StateFailed, errHas: []string{"(code 400)", "chat not found"}, requests: 1},
		{name: "blocked by the user", fx: f, target: blocked, state: push.StateFailed, errHas: []string{"(code 403)", "bot was blocked by the user"}, requests: 1},
		{name: "group upgraded to a supergroup", fx: f, target: oldGroup, state: push.StateFailed,
			errHas: []string{"(code 400)", "upgraded to a supergroup", "bind -1001234567890 as the target"}, requests: 1},
		{name: "token refused", fx: badFixture, target: badTarget, state: push.StateFailed, errHas: []string{"(code 401)", "Unauthorized", "check the bot's token"}, requests: 1},
		{name: "429 waits retry_after", fx: f, target: f.Target, fault: &fake.TelegramFault{Status: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1},
			state: push.StateSucceeded, requests: 2, accepted: 1, minTime: 950 * time.Millisecond},
		{name: "bad gateway is uncertain", fx: f, target: f.Target, fault: &fake.TelegramFault{Status: 502, Description: "Bad Gateway"},
			state: push.StateUncertain, errHas: []string{"(code 502)", "Bad Gateway", "may have received"}, requests: 1},
		{name: "connection dropped is uncertain", fx: f, target: f.Target, drop: true,
			state: push.StateUncertain, errHas: []string{"no answer after the request was sent"}, requests: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.fault != nil {
				h.Telegram.Fail(*c.fault)
			}
			if c.drop {
				h.Telegram.DropNext(1)
			}
			reqs, acc := h.Telegram.Requests(), len(h.Telegram.Messages())
			start := time.Now()
			j := send(t, h, c.fx, c.target, push.Message{Type: push.MsgTypeText, Content: "x"})
			if j.State != c.state {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			if time.Since(start) < c.minTime {
				t.Errorf("settled after %s, before the %s Telegram asked to wait", time.Since(start), c.minTime)
			}
			for _, s := range c.errHas {
				if !strings.Contains(j.Error, s) {
					t.Errorf("error %q lacks %q", j.Error, s)
				}
			}
			if strings.Contains(j.Error, badToken) || strings.Contains(j.Error, "telegram: telegram:") {
				t.Errorf("error %q", j.Error)
			}
			time.Sleep(50 * time.Millisecond)
			if diff := cmp.Diff([]int{c.requests, c.accepted}, []int{h.Telegram.Requests() - reqs, len(h.Telegram.Messages()) - acc}); diff != "" {
				t.Errorf("requests, accepted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLimitsAfterConversion: limits are checked before anything is
// charged, on the text as Telegram counts it: UTF-16 units after the
// Markdown became HTML and its entities were parsed.
func TestLimitsAfterConversion(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{MaxContent: 20000}), testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	longLinks := strings.Repeat("[x](https://e.com/"+strings.Repeat("p", 200)+") ", 30) // 6000+ bytes of source, 60 visible
	cases := []struct {
		name   string
		msg    push.Message
		reason string
	}{
		{"4096 characters", push.Message{Type: push.MsgTypeText, Content: strings.Repeat("a", 4096)}, ""},
		{"4097 characters", push.Message{Type: push.MsgTypeText, Content: strings.Repeat("a", 4097)}, "content_too_long"},
		{"2049 emoji are 4098 UTF-16 units", push.Message{Type: push.MsgTypeText, Content: strings.Repeat("😀", 2049)}, "content_too_long"},
		{"long Markdown source, short text", push.Message{Type: push.MsgTypeMarkdown, Content: longLinks}, ""},
		{"Markdown rendering to 4097 characters", push.Message{Type: push.MsgTypeMarkdown, Content: "**" + strings.Repeat("&amp;", 4097) + "**"}, "content_too_long"},
		{"Markdown rendering to nothing", push.Message{Type: push.MsgTypeMarkdown, Content: "<!-- only a comment -->"}, "empty_message"},
		{"caption of 1024", push.Message{Type: push.MsgTypeImage, ImageURL: "https://e.com/a.png", Content: strings.Repeat("c", 1024)}, ""},
		{"caption of 1025", push.Message{Type: push.MsgTypeImage, ImageURL: "https://e.com/a.png", Content: strings.Repeat("c", 1025)}, "caption_too_long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			points, jobs := h.Balance(t, f.Account.ID), h.CountJobs(t)
			res, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: c.msg})
			if c.reason != "" {
				if push.KindOf(err) != push.Invalid || push.ReasonOf(err) != c.reason {
					t.Fatalf("send = %v, want Invalid %s", err, c.reason)
				}
				if h.Balance(t, f.Account.ID) != points || h.CountJobs(t) != jobs {
					t.Fatal("a refused message was charged or queued")
				}
				return
			}
			if err != nil || res.Jobs[0].State != push.StateSucceeded {
				t.Fatalf("send = %v %+v: Telegram refused what Herald let through", err, res.Jobs)
			}
		})
	}
}

// TestPacing: with pacing on, a burst to one private chat is spaced about
// a second apart and Telegram never answers 429; without it, Telegram's
// 429s are waited out (retry_after) and every message still arrives once.
func TestPacing(t *testing.T) {
	for _, paced := range []bool{true, false} {
		t.Run(fmt.Sprintf("paced=%v", paced), func(t *testing.T) {
			opts := []testkit.Option{testkit.WithLimits(push.Limits{SyncWait: 20 * time.Millisecond})}
			if paced {
				opts = append(opts, testkit.WithPacing())
			}
			h := testkit.New(t, opts...)
			f := h.Seed(t)
			h.Telegram.EnforceLimits()
			var ids []string
			for i := 0; i < 4; i++ {
				res, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID,
					Message: push.Message{Type: push.MsgTypeText, Content: fmt.Sprint("burst ", i)}})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.Jobs[0].ID)
			}
			for _, id := range ids {
				h.WaitJob(t, id, push.StateSucceeded, 20*time.Second)
			}
			msgs := h.Telegram.Messages()
			if len(msgs) != 4 {
				t.Fatalf("%d messages accepted, want 4", len(msgs))
			}
			if paced {
				if n := h.Telegram.Throttled(); n != 0 {
					t.Fatalf("Telegram answered 429 %d times with pacing on", n)
				}
				for i := 1; i < len(msgs); i++ {
					if gap := msgs[i].At.Sub(msgs[i-1].At); gap < 900*time.Millisecond {
						t.Errorf("messages %d and %d %s apart", i-1, i, gap)
					}
				}
			} else if h.Telegram.Throttled() == 0 {
				t.Fatal("the unpaced burst was never throttled: the test proves nothing")
			}
		})
	}
}

// TestPace: Telegram's published limits in any window: about one message
// a second per private chat, 20 a minute per group, 30 a second per bot.
func TestPace(t *testing.T) {
	cfg := json.RawMessage(`{"token":"123456:` + strings.Repeat("a", 35) + `"}`)
	user := push.Target{Type: push.TargetUser, Address: "1"}
	group := push.Target{Type: push.TargetGroup, Address: "-1"}
	cases := []struct {
		name    string
		targets func(i int) push.Target
		window  time.Duration
		max     int
	}{
		{"private chat", func(int) push.Target { return user }, time.Minute, 60},
		{"group", func(int) push.Target { return group }, time.Minute, 20},
		{"bot across chats", func(i int) push.Target { return push.Target{Type: push.TargetUser, Address: fmt.Sprint(i)} }, time.Second, 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			p := telegram.New(platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }}), telegram.Options{})
			start, sent := now, 0
			for now.Sub(start) < c.window {
				if wait := p.Pace(push.Delivery{Bot: push.Bot{Config: cfg}, Target: c.targets(sent)}); wait > 0 {
					now = now.Add(wait)
					continue
				}
				sent++
			}
			if sent > c.max || sent < c.max*3/4 {
				t.Fatalf("%d sends in %s, want at most %d and not far below", sent, c.window, c.max)
			}
		})
	}
}

// TestConfigValidation names the bad field and never echoes the token.
func TestConfigValidation(t *testing.T) {
	p := telegram.New(nil, telegram.Options{})
	token := "123456789:" + strings.Repeat("S", 35)
	cases := []struct{ cfg, want string }{
		{`{"token":"` + token + `"}`, ""},
		{`{}`, "token is missing"},
		{`{"token":"` + token + `!"}`, "token is malformed"},
		{`{"token":"` + token + `","api_base":"ftp://x"}`, "api_base is malformed"},
		{`{"token":"` + token + `","proxy":"x"}`, `unknown field "proxy"`},
	}
	for _, c := range cases {
		err := p.ValidateConfig(json.RawMessage(c.cfg))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s refused: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.cfg, err, c.want)
		case err != nil && strings.Contains(err.Error(), token):
			t.Errorf("error echoes the token: %v", err)
		}
	}
}
