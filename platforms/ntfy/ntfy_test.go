package ntfy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/ntfy"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewNtfy(t)
	acct := h.Account(t, "acme")
	bot := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "alerts"})
	tests := []struct {
		name string
		msg  push.Message
		want fake.NtfyMessage
	}{
		{"text", push.Message{Type: push.MsgTypeText, Content: "disk *full* on db1"},
			fake.NtfyMessage{Topic: "alerts", Message: "disk *full* on db1"}},
		{"markdown", push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42\n\n- api\n- web"},
			fake.NtfyMessage{Topic: "alerts", Message: "**deployed** v42\n\n- api\n- web", Markdown: true}},
		{"image with caption", push.Message{Type: push.MsgTypeImage, Content: "today's chart", ImageURL: "https://img.example.com/c/chart.png"},
			fake.NtfyMessage{Topic: "alerts", Message: "today's chart", Attach: "https://img.example.com/c/chart.png", Filename: "chart.png"}},
		{"image without caption", push.Message{Type: push.MsgTypeImage, ImageURL: "https://img.example.com/c/chart.png"},
			fake.NtfyMessage{Topic: "alerts", Message: "chart.png", Attach: "https://img.example.com/c/chart.png", Filename: "chart.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, bot.ID, tt.msg)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			msgs := f.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("ntfy received %d messages, want 1", len(msgs)-before)
			}
			got := msgs[before]
			if j.PlatformIndex != got.ID || len(got.ID) != 12 {
				t.Errorf("platformIndex %q, ntfy id %q", j.PlatformIndex, got.ID)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(fake.NtfyMessage{}, "ID")); diff != "" {
				t.Errorf("ntfy received (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewNtfy(t)
	f.Protect("private")
	token := f.AddUser("phil", "s3cret-pass", "private")
	acct := h.Account(t, "acme")
	tests := []struct {
		name    string
		cfg     map[string]any
		state   push.State
		errHas  string
		user    string
		secrets []string
	}{
		{"token", map[string]any{"token": token}, push.StateSucceeded, "", "phil", nil},
		{"user and password", map[string]any{"user": "phil", "password": "s3cret-pass"}, push.StateSucceeded, "", "phil", nil},
		{"wrong token", map[string]any{"token": "tk_wrongwrongwrongwrongwrongwro"}, push.StateFailed, "ntfy: unauthorized: the server refused the credentials", "", []string{"tk_wrongwrongwrongwrongwrongwro"}},
		{"wrong password", map[string]any{"user": "phil", "password": "guess-0001"}, push.StateFailed, "(code 40101)", "", []string{"guess-0001"}},
		{"anonymous on a protected topic", map[string]any{}, push.StateFailed, "ntfy: forbidden: these credentials", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg["server"], tt.cfg["topic"] = f.URL(), "private"
			bot := h.PlatformBot(t, acct.ID, "ntfy", tt.cfg)
			before := len(f.Messages())
			j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: "hello"})
			if j.State != tt.state || !strings.Contains(j.Error, tt.errHas) {
				t.Fatalf("job %s %q, want %s with %q", j.State, j.Error, tt.state, tt.errHas)
			}
			for _, s := range tt.secrets {
				if strings.Contains(j.Error, s) {
					t.Errorf("the job's error %q shows a credential", j.Error)
				}
			}
			if tt.state == push.StateSucceeded {
				if got := f.Messages()[before]; got.User != tt.user {
					t.Errorf("published as %q, want %q", got.User, tt.user)
				}
			}
		})
	}
}

// TestAuthFailureLockout: after too many failed authentications ntfy
// answers 429 42909 to every bot on the server, right credentials or
// wrong; Herald fails the job at once, pointing at the credentials,
// instead of retrying into a longer lockout.
func TestAuthFailureLockout(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewNtfy(t)
	f.SetAuthFailureLimit(3)
	f.Protect("private")
	token := f.AddUser("phil", "s3cret-pass", "private")
	acct := h.Account(t, "acme")
	bad := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "private", "token": "tk_wrongwrongwrongwrongwrongwro"})
	good := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "private", "token": token})
	for range 3 {
		if j := h.SendNoTarget(t, acct.ID, bad.ID, push.Message{Content: "hello"}); j.State != push.StateFailed || !strings.Contains(j.Error, "(code 40101)") {
			t.Fatalf("bad credentials: job %s %q, want failed 40101", j.State, j.Error)
		}
	}
	for _, bot := range []push.Bot{good, bad} {
		before := f.Requests()
		j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: "hello"})
		if j.State != push.StateFailed || j.Attempts != 1 || strings.Count(j.Error, "(code 42909)") != 1 || !strings.Contains(j.Error, "check the token, or user and password") {
			t.Fatalf("locked out: job %s after %d attempts %q, want failed at once with 42909 and a hint to check the credentials", j.State, j.Attempts, j.Error)
		}
		if strings.Contains(j.Error, token) || strings.Contains(j.Error, "tk_wrong") {
			t.Fatalf("the job's error %q shows a credential", j.Error)
		}
		time.Sleep(100 * time.Millisecond) // a retry, if there were one, would arrive now
		if got := f.Requests() - before; got != 1 {
			t.Fatalf("the server saw %d requests for the job, want 1", got)
		}
	}
	if n := len(f.Messages()); n != 0 {
		t.Fatalf("ntfy published %d messages while locking out", n)
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond, SyncWait: 5 * time.Second}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		prepare  func(f *fake.Ntfy)
		state    push.State
		errHas   string
		requests int
	}{
		{"429 too many requests is retried", func(f *fake.Ntfy) {
			f.Fail(fake.NtfyFault(429, 42901, "limit reached: too many requests"))
		}, push.StateSucceeded, "", 2},
		{"429 daily quota is retried", func(f *fake.Ntfy) {
			f.Fail(fake.NtfyFault(429, 42908, "limit reached: daily message quota reached"))
		}, push.StateSucceeded, "", 2},
		{"400 is definitive", func(f *fake.Ntfy) {
			f.Fail(fake.NtfyFault(400, 40013, "invalid request: attachment URL is invalid"))
		}, push.StateFailed, "ntfy: invalid request: attachment URL is invalid (code 40013)", 1},
		{"ntfy's 500 is uncertain", func(f *fake.Ntfy) {
			f.Fail(fake.NtfyFault(500, 50001, "internal server error"))
		}, push.StateUncertain, "internal server error (code 50001)", 1},
		{"a proxy's 429 is retried", func(f *fake.Ntfy) {
			f.Fail(fake.Fault{Status: 429, Body: "<html>Too Many Requests</html>"})
		}, push.StateSucceeded, "", 2},
		{"a gateway's 502 is uncertain", func(f *fake.Ntfy) {
			f.Fail(fake.Fault{Status: 502, Body: "<html>Bad Gateway</html>"})
		}, push.StateUncertain, "HTTP 502", 1},
		{"a dropped connection is uncertain", func(f *fake.Ntfy) { f.DropNext(1) }, push.StateUncertain, "no answer after the request was sent", 1},
		{"a timeout after writing is uncertain", func(f *fake.Ntfy) { f.SetDelay(time.Second) }, push.StateUncertain, "timed out", 1},
		{"a 2xx without an id is uncertain", func(f *fake.Ntfy) {
			f.Fail(fake.Fault{Status: 200, Body: "{}"})
		}, push.StateUncertain, "no message id", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewNtfy(t)
			bot := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "t1"})
			tt.prepare(f)
			h.CheckSend(t, acct.ID, bot.ID, testkit.SendCheck{State: tt.state, ErrHas: []string{tt.errHas}, Requests: f.Requests, WantRequests: tt.requests})
		})
	}
}

// A body over the server's message limit would arrive as a file
// attachment; it is refused before anything is queued or charged.
func TestMessageLimit(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := fake.NewNtfy(t)
	acct := h.Account(t, "acme")
	cjk := strings.Repeat("警", 1400) // 4200 bytes in UTF-8, 1400 characters
	def := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "t"})

	// First the fake: ntfy itself would turn that body into a file.
	resp, err := http.Post(f.URL()+"/", "application/json", bytes.NewReader(mustJSON(t, map[string]any{"topic": "t", "message": cjk})))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if m := f.Messages(); len(m) != 1 || !m[0].AsFile || m[0].Message != "You received a file: attachment.txt" {
		t.Fatalf("fake ntfy published %+v for a long body; want a file attachment", m)
	}

	for _, msg := range []push.Message{{Content: cjk}, {Type: push.MsgTypeMarkdown, Content: cjk}, {Type: push.MsgTypeImage, Content: cjk, ImageURL: "https://img.example.com/a.png"}} {
		_, err := h.Engine.Send(ctx, push.AccountPrincipal(acct.ID), push.SendRequest{BotID: def.ID, Message: msg})
		if push.ReasonOf(err) != "content_too_long" || !strings.Contains(err.Error(), "4200 bytes") || !strings.Contains(err.Error(), "4096") || !strings.Contains(err.Error(), "attachment") {
			t.Fatalf("send of %d bytes (%s): %v; want content_too_long naming the sizes", len(cjk), msg.Type, err)
		}
	}
	if got := h.Balance(t, acct.ID); got != 100 {
		t.Errorf("balance %d after refused sends, want 100 (nothing charged)", got)
	}
	if f.Requests() != 1 || h.CountJobs(t) != 0 {
		t.Errorf("refused sends reached ntfy (%d requests) or made jobs (%d)", f.Requests()-1, h.CountJobs(t))
	}

	// A server configured with a higher limit takes it as text.
	f.SetMessageLimit(8192)
	big := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "t", "message_limit": 8192})
	j := h.SendNoTarget(t, acct.ID, big.ID, push.Message{Content: cjk})
	if j.State != push.StateSucceeded {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	if m := f.Messages()[1]; m.AsFile || m.Message != cjk {
		t.Fatalf("published %d bytes as file=%v", len(m.Message), m.AsFile)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateConfig(t *testing.T) {
	p := ntfy.New(nil)
	tests := []struct {
		cfg    string
		field  string // "" when valid
		secret string
	}{
		{`{"topic":"alerts"}`, "", ""},
		{`{"topic":"alerts","server":"https://ntfy.example.com","token":"tk_abc","message_limit":8192}`, "", ""},
		{`{"topic":"alerts","user":"phil","password":"pw"}`, "", ""},
		{`{}`, "topic is missing", ""},
		{`{"topic":"a/b"}`, "topic is malformed", ""},
		{`{"topic":"t","token":"tk_se cret"}`, "token is malformed", "tk_se cret"},
		{`{"topic":"t","token":"tk_x","user":"u","password":"p4ss-secret"}`, "token is malformed", "p4ss-secret"},
		{`{"topic":"t","user":"phil"}`, "password is missing", ""},
		{`{"topic":"t","password":"p4ss-secret"}`, "user is missing", "p4ss-secret"},
		{`{"topic":"t","server":"ftp://x"}`, "server is malformed", ""},
		{`{"topic":"t","server":"https://x/?token=tk_leak"}`, "server is malformed", "tk_leak"},
		{`{"topic":"t","message_limit":-1}`, "message_limit is malformed", ""},
		{`{"topic":"t","tokn":"tk_typo"}`, `unknown field "tokn"`, "tk_typo"},
		{`{"topic":7}`, "field topic must be a string", ""},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, tt.secret)
	}
}

func TestInfoAndTargets(t *testing.T) {
	p := ntfy.New(nil)
	if p.Info().Targets {
		t.Fatal("ntfy says it has targets")
	}
	if err := p.ValidateTarget(nil, push.Target{}); push.ReasonOf(err) != "platform_has_no_targets" {
		t.Fatalf("ValidateTarget = %v", err)
	}
}

// The pacer holds sends to one server and credentials to ntfy's default
// visitor limit: a burst of 60, then one every 5 seconds.
func TestPacing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := ntfy.New(platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }}))
	d := push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"topic":"a","token":"tk_one"}`)}}
	other := push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"topic":"a","token":"tk_two"}`)}}
	for i := 0; i < 60; i++ {
		if w := p.Pace(d); w != 0 {
			t.Fatalf("send %d of the burst must wait %s", i+1, w)
		}
	}
	if w := p.Pace(d); w != 5*time.Second {
		t.Fatalf("the 61st send waits %s, want 5s", w)
	}
	if w := p.Pace(other); w != 0 {
		t.Fatalf("other credentials wait %s", w)
	}
	now = now.Add(5 * time.Second)
	if w := p.Pace(d); w != 0 {
		t.Fatalf("after 5s the send still waits %s", w)
	}
}

// ntfy peeks at most its limit and takes a body that fills it for a
// longer one: a message of exactly the limit arrives as a file, so it is
// refused; the JSON limit counts the bytes Herald posts, where <, > and &
// are themselves, not six-byte \u escapes.
func TestMessageLimitEdges(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := fake.NewNtfy(t)
	acct := h.Account(t, "acme")
	bot := h.PlatformBot(t, acct.ID, "ntfy", map[string]any{"server": f.URL(), "topic": "t"})

	// The fake first, as ntfy behaves: exactly the limit is a file, one
	// byte less is text, and a JSON body of twice the limit is refused.
	for _, tt := range []struct {
		body       []byte
		status     int
		asFile     bool
		whatItWent string
	}{
		{mustJSON(t, map[string]any{"topic": "t", "message": strings.Repeat("a", 4096)}), 200, true, "4096-byte message"},
		{mustJSON(t, map[string]any{"topic": "t", "message": strings.Repeat("a", 4095)}), 200, false, "4095-byte message"},
		{[]byte(`{"topic":"t","message":"` + strings.Repeat("a", 8192-len(`{"topic":"t","message":""}`)) + `"}`), 413, false, "8192-byte JSON body"},
	} {
		before := len(f.Messages())
		resp, err := http.Post(f.URL()+"/", "application/json", bytes.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("fake ntfy answered %d to a %s, want %d", resp.StatusCode, tt.whatItWent, tt.status)
		}
		if m := f.Messages(); tt.status == 200 && (len(m) != before+1 || m[before].AsFile != tt.asFile) {
			t.Fatalf("fake ntfy published a %s as file=%v, want %v", tt.whatItWent, m[before].AsFile, tt.asFile)
		}
	}
	published := len(f.Messages())

	tests := []struct {
		name    string
		content string
		errHas  string // empty: delivered as text
	}{
		// 1365 three-byte characters are 4095 bytes.
		{"exactly the limit", strings.Repeat("警", 1365) + "a", "4096 bytes in UTF-8"},
		{"one byte under", strings.Repeat("警", 1365), ""},
		{"angle brackets and ampersands", strings.Repeat("<", 1400) + strings.Repeat("&>", 300), ""},
		{"control characters escaped by JSON", strings.Repeat("\x01", 1400), "as JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.Engine.Send(ctx, push.AccountPrincipal(acct.ID), push.SendRequest{BotID: bot.ID, Message: push.Message{Content: tt.content}})
			if tt.errHas != "" {
				if push.ReasonOf(err) != "content_too_long" || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("send of %d bytes: %v; want content_too_long with %q", len(tt.content), err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("send of %d bytes refused: %v", len(tt.content), err)
			}
			j := h.Settled(t, res.Jobs[0].ID, 5*time.Second)
			if j.State != push.StateSucceeded {
				t.Fatalf("job %s: %s", j.State, j.Error)
			}
			m := f.Messages()
			if got := m[len(m)-1]; got.AsFile || got.Message != tt.content {
				t.Fatalf("ntfy published %d bytes as file=%v, want the %d-byte message as text", len(got.Message), got.AsFile, len(tt.content))
			}
		})
	}
	delivered := 0
	for _, tt := range tests {
		if tt.errHas == "" {
			delivered++
		}
	}
	if got := len(f.Messages()) - published; got != delivered {
		t.Errorf("ntfy published %d messages, want %d (refused sends reach nothing)", got, delivered)
	}
	if got := h.Balance(t, acct.ID); got != int64(100-delivered) {
		t.Errorf("balance %d, want %d (refused sends charge nothing)", got, 100-delivered)
	}
}
