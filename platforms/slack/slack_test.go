package slack_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/slack"
	"github.com/heraldpush/herald/push"
)

func off() *bool { b := false; return &b }

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewSlack(t)
	acct := h.Account(t, "acme")
	bots := map[string]push.Bot{}
	for _, fl := range []string{"slack", "mattermost", "rocketchat"} {
		cfg := map[string]any{"webhook_url": f.NewHook(fl)}
		if fl != "slack" {
			cfg["flavor"] = fl
		}
		bots[fl] = h.PlatformBot(t, acct.ID, "slack", cfg)
	}
	img := "https://img.example.com/cpu.png"
	tests := []struct {
		name   string
		flavor string
		msg    push.Message
		want   fake.SlackMessage
	}{
		{"slack text: formatting off, escaped", "slack", push.Message{Content: "a <b> & *c*"},
			fake.SlackMessage{Text: "a &lt;b&gt; &amp; *c*", Mrkdwn: off()}},
		{"slack markdown: mrkdwn", "slack", push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** [v42](https://ci.example.com/42)"},
			fake.SlackMessage{Text: "*deployed* <https://ci.example.com/42|v42>"}},
		{"slack image: caption section and image block", "slack", push.Message{Type: push.MsgTypeImage, Content: "CPU <prod>", ImageURL: img},
			fake.SlackMessage{Text: "CPU &lt;prod&gt;", Blocks: []map[string]any{
				{"type": "section", "text": map[string]any{"type": "plain_text", "text": "CPU <prod>"}},
				{"type": "image", "image_url": img, "alt_text": "CPU <prod>"},
			}}},
		{"slack image without caption", "slack", push.Message{Type: push.MsgTypeImage, ImageURL: img},
			fake.SlackMessage{Text: "cpu.png", Blocks: []map[string]any{{"type": "image", "image_url": img, "alt_text": "cpu.png"}}}},
		{"mattermost text: escaped Markdown", "mattermost", push.Message{Content: "a *b*\n# c"},
			fake.SlackMessage{Text: "a \\*b\\*  \n\\# c"}},
		{"mattermost markdown", "mattermost", push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed**"},
			fake.SlackMessage{Text: "**deployed**"}},
		{"mattermost image", "mattermost", push.Message{Type: push.MsgTypeImage, Content: "cpu", ImageURL: img},
			fake.SlackMessage{Text: "cpu\n\n![cpu](https://img.example.com/cpu.png)"}},
		{"rocketchat text", "rocketchat", push.Message{Content: "hello"}, fake.SlackMessage{Text: "hello"}},
		{"rocketchat markdown", "rocketchat", push.Message{Type: push.MsgTypeMarkdown, Content: "*deployed*"}, fake.SlackMessage{Text: "*deployed*"}},
		{"rocketchat image: attachment", "rocketchat", push.Message{Type: push.MsgTypeImage, Content: "cpu", ImageURL: img},
			fake.SlackMessage{Text: "cpu", Attachments: []map[string]any{{"image_url": img}}}},
		{"rocketchat image without caption", "rocketchat", push.Message{Type: push.MsgTypeImage, ImageURL: img},
			fake.SlackMessage{Attachments: []map[string]any{{"image_url": img}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, bots[tt.flavor].ID, tt.msg)
			if j.State != push.StateSucceeded || j.PlatformIndex != "" {
				t.Fatalf("job %s %q platformIndex %q", j.State, j.Error, j.PlatformIndex)
			}
			tt.want.Flavor = tt.flavor
			if diff := cmp.Diff(tt.want, testkit.OneNew(t, f.Messages(), before), cmpopts.IgnoreFields(fake.SlackMessage{}, "Path")); diff != "" {
				t.Errorf("webhook received (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		flavor   string
		hook     func(f *fake.Slack, url string) string
		prepare  func(f *fake.Slack, url string)
		state    push.State
		errHas   string
		requests int
	}{
		{"slack: wrong key is definitive", "slack", func(_ *fake.Slack, u string) string {
			return u[:strings.LastIndexByte(u, '/')+1] + "wrongkeywrongkeywrongkey"
		}, nil,
			push.StateFailed, "slack: HTTP 403 invalid_token: the webhook URL is not (or no longer) valid", 1},
		{"slack: unknown hook is definitive", "slack", func(f *fake.Slack, _ string) string { return f.URL() + "/services/TX/BX/nothinghere" }, nil,
			push.StateFailed, "HTTP 404 no_service", 1},
		{"slack: archived channel is definitive", "slack", nil, func(f *fake.Slack, u string) { f.Archive(u) },
			push.StateFailed, "HTTP 410 channel_is_archived: the webhook's channel does not take the post (code channel_is_archived)", 1},
		{"slack: 429 is retried after Retry-After", "slack", nil, func(f *fake.Slack, _ string) { f.Fail(fake.SlackFault(429, "rate_limited", 1)) },
			push.StateSucceeded, "", 2},
		{"slack: 500 is uncertain", "slack", nil, func(f *fake.Slack, _ string) { f.Fail(fake.SlackFault(500, "rollup_error", 0)) },
			push.StateUncertain, "rollup_error", 1},
		{"slack: a gateway page is uncertain", "slack", nil, func(f *fake.Slack, _ string) {
			f.Fail(fake.Fault{Status: 503, Body: "<html>Service Unavailable</html>"})
		},
			push.StateUncertain, "HTTP 503", 1},
		{"slack: a 200 that is not ok is uncertain", "slack", nil, func(f *fake.Slack, _ string) { f.Fail(fake.Fault{Status: 200, Body: "maybe"}) },
			push.StateUncertain, "not \"ok\"", 1},
		{"slack: a dropped connection is uncertain", "slack", nil, func(f *fake.Slack, _ string) { f.DropNext(1) }, push.StateUncertain, "no answer", 1},
		{"slack: a timeout after writing is uncertain", "slack", nil, func(f *fake.Slack, _ string) { f.SetDelay(time.Second) }, push.StateUncertain, "timed out", 1},
		{"mattermost: unknown hook is definitive", "mattermost", func(f *fake.Slack, _ string) string { return f.URL() + "/hooks/nonexistenthookid0000000000" }, nil,
			push.StateFailed, "Invalid webhook.: the webhook URL is not (or no longer) valid: update webhook_url (code web.incoming_webhook.invalid.app_error)", 1},
		{"mattermost: 429 is retried", "mattermost", nil, func(f *fake.Slack, _ string) {
			f.Fail(fake.Fault{Status: 429, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: `{"id":"api.context.rate_limit","message":"too many requests","status_code":429}`})
		}, push.StateSucceeded, "", 2},
		{"mattermost: a dropped connection is uncertain", "mattermost", nil, func(f *fake.Slack, _ string) { f.DropNext(1) }, push.StateUncertain, "no answer", 1},
		{"rocketchat: unknown token is definitive", "rocketchat", func(_ *fake.Slack, u string) string {
			return u[:strings.LastIndexByte(u, '/')+1] + "wrongtokenwrongtoken"
		}, nil,
			push.StateFailed, "Invalid integration id or token provided.: the webhook URL is not (or no longer) valid: update webhook_url (code 404)", 1},
		{"rocketchat: success false in a 200 is definitive", "rocketchat", nil, func(f *fake.Slack, _ string) {
			f.Fail(fake.Fault{Status: 200, Body: `{"success":false,"error":"error-not-allowed"}`})
		}, push.StateFailed, "error-not-allowed", 1},
		{"rocketchat: 502 is uncertain", "rocketchat", nil, func(f *fake.Slack, _ string) { f.Fail(fake.Fault{Status: 502, Body: "bad gateway"}) }, push.StateUncertain, "HTTP 502", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewSlack(t)
			hook := f.NewHook(tt.flavor)
			if tt.hook != nil {
				hook = tt.hook(f, hook)
			}
			bot := h.PlatformBot(t, acct.ID, "slack", map[string]any{"webhook_url": hook, "flavor": tt.flavor})
			if tt.prepare != nil {
				tt.prepare(f, hook)
			}
			start := time.Now()
			j := h.Settled(t, h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: "hello"}).ID, 5*time.Second)
			if j.State != tt.state || !strings.Contains(j.Error, tt.errHas) {
				t.Fatalf("job %s %q, want %s with %q", j.State, j.Error, tt.state, tt.errHas)
			}
			u, _ := url.Parse(hook)
			key := u.Path[strings.LastIndexByte(u.Path, '/')+1:]
			if strings.Contains(j.Error, key) || strings.Contains(j.Error, u.Path) {
				t.Errorf("the job's error %q shows the webhook's key", j.Error)
			}
			if tt.name == "slack: 429 is retried after Retry-After" && time.Since(start) < time.Second {
				t.Errorf("retried after %s, before Slack's Retry-After of 1s", time.Since(start))
			}
			time.Sleep(50 * time.Millisecond)
			if got := f.Requests(); got != tt.requests {
				t.Errorf("webhook got %d requests, want %d", got, tt.requests)
			}
		})
	}
}

// A proxy's error page that quotes the webhook URL does not leak it.
func TestErrorsRedactTheWebhookURL(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewSlack(t)
	acct := h.Account(t, "acme")
	hook := f.NewHook("slack")
	bot := h.PlatformBot(t, acct.ID, "slack", map[string]any{"webhook_url": hook})
	u, _ := url.Parse(hook)
	f.Fail(fake.Fault{Status: 400, Body: "<html>no route for POST " + hook + " (" + u.Path + ")</html>"})
	j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: "x"})
	if j.State != push.StateFailed || strings.Contains(j.Error, u.Path) || strings.Contains(j.Error, strings.TrimPrefix(u.Path, "/services/")) {
		t.Fatalf("job %s %q shows the webhook", j.State, j.Error)
	}
}

func TestLimits(t *testing.T) {
	p := slack.New(nil)
	long := strings.Repeat("é", 3001)
	tests := []struct {
		flavor string
		msg    push.Message
		ok     bool
	}{
		{"slack", push.Message{Type: push.MsgTypeImage, Content: long, ImageURL: "https://x.example/a.png"}, false}, // caption section > 3000
		{"slack", push.Message{Type: push.MsgTypeImage, Content: strings.Repeat("é", 1999), ImageURL: "https://x.example/a.png"}, true},
		{"slack", push.Message{Content: long}, true},
		{"rocketchat", push.Message{Content: strings.Repeat("x", 5001)}, false},
		{"rocketchat", push.Message{Content: strings.Repeat("x", 5000)}, true},
		{"mattermost", push.Message{Content: strings.Repeat("*", 9000)}, false}, // escaping doubles it past 16383
	}
	for _, tt := range tests {
		cfg := json.RawMessage(`{"webhook_url":"https://hooks.example.com/x","flavor":"` + tt.flavor + `"}`)
		err := p.ValidateBotMessage(cfg, tt.msg, "")
		if (err == nil) != tt.ok || (err != nil && push.ReasonOf(err) != "content_too_long") {
			t.Errorf("%s %d characters: %v", tt.flavor, len([]rune(tt.msg.Content)), err)
		}
	}
}

// One message a second per Slack webhook; other flavors are not paced.
func TestPacing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := slack.New(platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }}))
	hook := func(u, fl string) push.Delivery {
		return push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"webhook_url":"` + u + `","flavor":"` + fl + `"}`)}}
	}
	a, b := hook("https://hooks.example.com/services/T/B/a", "slack"), hook("https://hooks.example.com/services/T/B/b", "slack")
	if p.Pace(a) != 0 || p.Pace(a) != time.Second || p.Pace(b) != 0 {
		t.Fatal("slack webhooks are not paced one a second each")
	}
	now = now.Add(time.Second)
	if p.Pace(a) != 0 {
		t.Fatal("a second later the webhook still waits")
	}
	mm := hook("https://mm.example.com/hooks/x", "mattermost")
	for i := 0; i < 10; i++ {
		if p.Pace(mm) != 0 {
			t.Fatal("a mattermost webhook is paced")
		}
	}
}

func TestValidateConfig(t *testing.T) {
	p := slack.New(nil)
	secret := "XyZsecretKey0123456789ab"
	tests := []struct {
		cfg   string
		field string
	}{
		{`{"webhook_url":"https://hooks.slack.com/services/T0/B0/` + secret + `"}`, ""},
		{`{"webhook_url":"https://mm.example.com/hooks/` + secret + `","flavor":"mattermost"}`, ""},
		{`{"webhook_url":"http://rc.local:3000/hooks/id/` + secret + `","flavor":"rocketchat"}`, ""},
		{`{}`, "webhook_url is missing"},
		{`{"webhook_url":"hooks.slack.com/services/T0/B0/` + secret + `"}`, "webhook_url is malformed"},
		{`{"webhook_url":"https://user:` + secret + `@hooks.example.com/x"}`, "webhook_url is malformed"},
		{`{"webhook_url":"https://hooks.slack.com/services/T0/B0/` + secret + `","flavor":"teams"}`, "flavor is malformed"},
		{`{"url":"https://hooks.slack.com/services/T0/B0/` + secret + `"}`, `unknown field "url"`},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, secret)
	}
	if p.Info().Targets {
		t.Error("slack says it has targets")
	}
}
