package bark_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms/bark"
	"github.com/heraldpush/herald/push"
)

func TestSendFormats(t *testing.T) {
	h := testkit.New(t)
	f := fake.NewBark(t)
	acct := h.Account(t, "acme")
	bot := h.PlatformBot(t, acct.ID, "bark", map[string]any{"server": f.URL(), "device_key": f.NewDevice(), "group": "ops"})
	tests := []struct {
		name string
		msg  push.Message
		want fake.BarkPush
	}{
		{"text", push.Message{Content: "disk full"}, fake.BarkPush{Body: "disk full", Group: "ops"}},
		{"markdown", push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42"}, fake.BarkPush{Body: "NoContent", Markdown: "**deployed** v42", Group: "ops"}},
		{"image", push.Message{Type: push.MsgTypeImage, Content: "chart", ImageURL: "https://img.example.com/c.png"}, fake.BarkPush{Body: "chart", Image: "https://img.example.com/c.png", Group: "ops"}},
		{"image without caption", push.Message{Type: push.MsgTypeImage, ImageURL: "https://img.example.com/c.png"}, fake.BarkPush{Body: "c.png", Image: "https://img.example.com/c.png", Group: "ops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Pushes())
			j := h.SendNoTarget(t, acct.ID, bot.ID, tt.msg)
			if j.State != push.StateSucceeded || j.PlatformIndex != "" {
				t.Fatalf("job %s %q platformIndex %q", j.State, j.Error, j.PlatformIndex)
			}
			got := testkit.OneNew(t, f.Pushes(), before)
			// The job id is Bark's id, as a JSON string.
			if id, ok := got.ID.(string); !ok || id != j.ID {
				t.Errorf("bark id %#v, want the job id %q as a string", got.ID, j.ID)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(fake.BarkPush{}, "ID", "DeviceKey", "PayloadSize")); diff != "" {
				t.Errorf("bark pushed (-want +got):\n%s", diff)
			}
		})
	}
}

// The APNs payload limit is checked before the job is charged; the fake
// shows that the same message would be refused as PayloadTooLarge.
func TestPayloadLimit(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := fake.NewBark(t)
	acct := h.Account(t, "acme")
	key := f.NewDevice()
	bot := h.PlatformBot(t, acct.ID, "bark", map[string]any{"server": f.URL(), "device_key": key})
	long := strings.Repeat("警", 1400) // 4200 bytes
	if n := bark.PayloadSize(map[string]any{"device_key": key, "body": long, "id": strings.Repeat("0", 36)}); n <= bark.MaxPayload {
		t.Fatalf("test message makes a %d-byte payload; want one over the limit", n)
	}
	_, err := h.Engine.Send(t.Context(), push.AccountPrincipal(acct.ID), push.SendRequest{BotID: bot.ID, Message: push.Message{Content: long}})
	if push.ReasonOf(err) != "content_too_long" || !strings.Contains(err.Error(), "4096") {
		t.Fatalf("send: %v; want content_too_long", err)
	}
	if h.Balance(t, acct.ID) != 100 || f.Requests() != 0 {
		t.Fatalf("balance %d, bark requests %d after a refused send", h.Balance(t, acct.ID), f.Requests())
	}
	// Just under the margin passes and arrives.
	fits := strings.Repeat("警", 1200)
	j := h.SendNoTarget(t, acct.ID, bot.ID, push.Message{Content: fits})
	if j.State != push.StateSucceeded {
		t.Fatalf("1200 Chinese characters: job %s %s", j.State, j.Error)
	}
	if p := f.Pushes()[0]; p.PayloadSize > bark.MaxPayload || p.Body != fits {
		t.Fatalf("pushed %d-byte payload", p.PayloadSize)
	}
}

func TestErrorClasses(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{AttemptTimeout: 300 * time.Millisecond}))
	acct := h.Account(t, "acme")
	tests := []struct {
		name     string
		unknown  bool
		prepare  func(f *fake.Bark)
		state    push.State
		errHas   string
		requests int
	}{
		{"unknown device key is definitive", true, nil, push.StateFailed, "failed to get device token: failed to get [[redacted]] device token from database: the server does not know the device key: check device_key in the bot config (code 400)", 1},
		{"PayloadTooLarge is definitive", false, func(f *fake.Bark) {
			f.Fail(fake.BarkFault(500, "push failed: APNS push failed: PayloadTooLarge"))
		}, push.StateFailed, "PayloadTooLarge: the notification is larger than APNs' 4 KB", 1},
		{"BadDeviceToken is definitive", false, func(f *fake.Bark) { f.Fail(fake.BarkFault(500, "push failed: APNS push failed: BadDeviceToken")) }, push.StateFailed, "Apple refused the notification (code 500)", 1},
		{"APNs TooManyRequests is retried", false, func(f *fake.Bark) {
			f.Fail(fake.BarkFault(500, "push failed: APNS push failed: TooManyRequests"))
		}, push.StateSucceeded, "", 2},
		{"another push failure is uncertain", false, func(f *fake.Bark) {
			f.Fail(fake.BarkFault(500, "push failed: Post \"https://api.push.apple.com/3/device/x\": context deadline exceeded"))
		}, push.StateUncertain, "context deadline exceeded", 1},
		{"a gateway's 502 is uncertain", false, func(f *fake.Bark) { f.Fail(fake.Fault{Status: 502, Body: "bad gateway"}) }, push.StateUncertain, "HTTP 502", 1},
		{"basic auth (418) is definitive", false, func(f *fake.Bark) { f.Fail(fake.Fault{Status: 418, Body: "I'm a teapot"}) }, push.StateFailed, "basic authentication", 1},
		{"a dropped connection is uncertain", false, func(f *fake.Bark) { f.DropNext(1) }, push.StateUncertain, "no answer", 1},
		{"a timeout after writing is uncertain", false, func(f *fake.Bark) { f.SetDelay(time.Second) }, push.StateUncertain, "timed out", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewBark(t)
			key := f.NewDevice()
			if tt.unknown {
				key = "UnknownDeviceKey0123456"
			}
			bot := h.PlatformBot(t, acct.ID, "bark", map[string]any{"server": f.URL(), "device_key": key})
			if tt.prepare != nil {
				tt.prepare(f)
			}
			h.CheckSend(t, acct.ID, bot.ID, testkit.SendCheck{State: tt.state, ErrHas: []string{tt.errHas}, Secrets: []string{key}, Requests: f.Requests, WantRequests: tt.requests})
		})
	}
}

func TestValidateConfig(t *testing.T) {
	p := bark.New(nil)
	tests := []struct {
		cfg    string
		field  string
		secret string
	}{
		{`{"device_key":"AbCdEf0123456789xyzABC"}`, "", ""},
		{`{"device_key":"AbC","server":"https://bark.example.com","group":"ops"}`, "", ""},
		{`{}`, "device_key is missing", ""},
		{`{"device_key":"Ab/Cd secret"}`, "device_key is malformed", "Ab/Cd secret"},
		{`{"device_key":"AbC","server":"bark.example.com"}`, "server is malformed", ""},
		{`{"device_key":"AbC","group":"` + strings.Repeat("g", 65) + `"}`, "group is malformed", ""},
		{`{"devicekey":"AbCsecret"}`, `unknown field "devicekey"`, "AbCsecret"},
	}
	for _, tt := range tests {
		testkit.CheckConfig(t, p, tt.cfg, tt.field, tt.secret)
	}
	if p.Info().Targets {
		t.Error("bark says it has targets")
	}
}
