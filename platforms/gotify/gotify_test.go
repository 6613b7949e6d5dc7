package gotify_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms/gotify"
	"github.com/heraldpush/herald/push"
)

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewGotify(t)
	acct := h.Account(t, "acme")
	bot := h.PlatformBot(t, acct.ID, "gotify", map[string]any{"server": f.URL(), "token": f.NewApp("deploys")})
	prio := h.PlatformBot(t, acct.ID, "gotify", map[string]any{"server": f.URL() + "/", "token": f.NewApp("pager"), "priority": 9})
	md := map[string]any{"client::display": map[string]any{"contentType": "text/markdown"}}
	tests := []struct {
		name string
		bot  push.Bot
		msg  push.Message
		want fake.GotifyMessage
	}{
		{"text", bot, push.Message{Content: "disk *full*"},
			fake.GotifyMessage{AppID: 1, Message: "disk *full*", Title: "deploys", Priority: 5}},
		{"markdown", bot, push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42"},
			fake.GotifyMessage{AppID: 1, Message: "**deployed** v42", Title: "deploys", Priority: 5, Extras: md}},
		{"image", bot, push.Message{Type: push.MsgTypeImage, Content: "chart #1", ImageURL: "https://img.example.com/c (1).png"},
			fake.GotifyMessage{AppID: 1, Message: "chart \\#1\n\n![chart #1](https://img.example.com/c%20%281%29.png)", Title: "deploys", Priority: 5, Extras: map[string]any{
				"client::display":      map[string]any{"contentType": "text/markdown"},
				"client::notification": map[string]any{"bigImageUrl": "https://img.example.com/c (1).png"},
			}}},
		{"configured priority", prio, push.Message{Content: "wake up"},
			fake.GotifyMessage{AppID: 2, Message: "wake up", Title: "pager", Priority: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, tt.bot.ID, tt.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			got := testkit.OneNew(t, f.Messages(), before)
			if j.PlatformIndex != strconv.FormatInt(got.ID, 10) {
				t.Errorf("platformIndex %q, gotify id %d", j.PlatformIndex, got.ID)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(fake.GotifyMessage{}, "ID")); diff != "" {
				t.Errorf("gotify stored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		token    func(f *fake.Gotify) string
		prepare  func(f *fake.Gotify)
		state    push.State
		errHas   string
		requests int
	}{
		{"unknown token is definitive", func(*fake.Gotify) string { return "Aunknown-token1" }, nil, push.StateFailed,
			"gotify: Unauthorized: you need to provide a valid access token or user credentials to access this api: the server refused the token", 1},
		{"a client token is definitive", func(f *fake.Gotify) string { return f.NewClient() }, nil, push.StateFailed, "Forbidden: you are not allowed to access this api", 1},
		{"400 is definitive", nil, func(f *fake.Gotify) { f.Fail(fake.GotifyFault(400, "Field 'message' is required")) }, push.StateFailed,
			"gotify: Bad Request: Field 'message' is required (code 400)", 1},
		{"a proxy's 429 is retried", nil, func(f *fake.Gotify) {
			f.Fail(fake.Fault{Status: 429, Header: map[string][]string{"Retry-After": {"0"}}, Body: "slow down"})
		}, push.StateSucceeded, "", 2},
		{"Gotify's 500 is uncertain", nil, func(f *fake.Gotify) { f.Fail(fake.GotifyFault(500, "database is locked")) }, push.StateUncertain, "database is locked", 1},
		{"a gateway's 504 is uncertain", nil, func(f *fake.Gotify) { f.Fail(fake.Fault{Status: 504, Body: "Gateway Timeout"}) }, push.StateUncertain, "HTTP 504", 1},
		{"a dropped connection is uncertain", nil, func(f *fake.Gotify) { f.DropNext(1) }, push.StateUncertain, "no answer after the request was sent", 1},
		{"a timeout after writing is uncertain", nil, func(f *fake.Gotify) { f.SetDelay(time.Second) }, push.StateUncertain, "timed out", 1},
		{"an unreadable 200 is uncertain", nil, func(f *fake.Gotify) { f.Fail(fake.Fault{Status: 200, Body: "<html>"}) }, push.StateUncertain, "could not be read", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewGotify(t)
			token := f.NewApp("app")
			if tt.token != nil {
				token = tt.token(f)
			}
			bot := h.PlatformBot(t, acct.ID, "gotify", map[string]any{"server": f.URL(), "token": token})
			if tt.prepare != nil {
				tt.prepare(f)
			}
			h.CheckSend(t, acct.ID, bot.ID, testkit.SendCheck{State: tt.state, ErrHas: []string{tt.errHas}, Secrets: []string{token}, Requests: f.Requests, WantRequests: tt.requests})
		})
	}
}

func TestValidateConfig(t *testing.T) {
	p := gotify.New(nil)
	tests := []struct {
		cfg    string
		field  string
		secret string
	}{
		{`{"server":"https://gotify.example.com","token":"AbCdEf0123456.-"}`, "", ""},
		{`{"server":"http://10.0.0.2:8080/gotify","token":"AbC","priority":0}`, "", ""},
		{`{"token":"AbC"}`, "server is missing", ""},
		{`{"server":"https://g.example.com"}`, "token is missing", ""},
		{`{"server":"https://g.example.com","token":"Ab C secret"}`, "token is malformed", "Ab C secret"},
		{`{"server":"https://g.example.com","token":"AbC","priority":11}`, "priority is malformed", ""},
		{`{"server":"g.example.com","token":"AbC"}`, "server is malformed", ""},
		{`{"server":"https://g.example.com/?token=Aleaked","token":"AbC"}`, "server is malformed", "Aleaked"},
		{`{"server":"https://g.example.com","token":"AbC","apptoken":"Asecret"}`, `unknown field "apptoken"`, "Asecret"},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, tt.secret)
	}
	if p.Info().Targets {
		t.Error("gotify says it has targets")
	}
}
