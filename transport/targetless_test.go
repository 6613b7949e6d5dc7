package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// targetless is a Herald with an ntfy bot and a DingTalk bot (platforms
// without targets) and a Telegram bot with a bound target, for contrast.
type targetless struct {
	h      *testkit.Herald
	ntfy   *fake.Ntfy
	ding   *fake.DingTalk
	acct   push.Account
	key    string
	relay  push.Bot // ntfy
	work   push.Bot // dingtalk
	tg     push.Bot
	target push.Target
}

func newTargetless(t *testing.T, opts ...testkit.Option) *targetless {
	t.Helper()
	h := testkit.New(t, opts...)
	s := &targetless{h: h, ntfy: fake.NewNtfy(t), ding: fake.NewDingTalk(t)}
	f := h.Seed(t)
	s.acct, s.key, s.tg, s.target = f.Account, f.Key, f.Bot, f.Target
	s.relay = h.PlatformBot(t, s.acct.ID, "ntfy", map[string]any{"server": s.ntfy.URL(), "topic": "alerts"})
	token, secret := s.ding.NewRobot(fake.DingTalkSecurity{Sign: true})
	s.work = h.PlatformBot(t, s.acct.ID, "dingtalk", map[string]any{"access_token": token, "secret": secret, "api_base": s.ding.URL()})
	return s
}

func data(r testkit.Response) map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// Single sends to a bot without targets work with the target left out in
// every way the two endpoints allow.
func TestTargetlessSingleSend(t *testing.T) {
	s := newTargetless(t)
	tests := []struct {
		name string
		path string
		body string
	}{
		{"4.1 target omitted", "/openapi/v1/push/private", `{"botId":%d,"content":"%s"}`},
		{"4.1 target empty", "/openapi/v1/push/private", `{"botId":%d,"target":"","content":"%s"}`},
		{"4.1 target null", "/openapi/v1/push/private", `{"botId":%d,"target":null,"content":"%s","msgType":0}`},
		{"4.2 target_id omitted", "/openapi/send", `{"bot_id":%d,"content":"%s"}`},
		{"4.2 target_id 0", "/openapi/send", `{"bot_id":%d,"target_id":0,"content":"%s"}`},
		{"4.2 target_id null", "/openapi/send", `{"bot_id":%d,"target_id":null,"content":"%s"}`},
	}
	// What each platform received, as one line: the topic (ntfy) and the
	// text of every message so far.
	received := map[string]func() []string{
		"ntfy": func() []string {
			var out []string
			for _, m := range s.ntfy.Messages() {
				out = append(out, m.Topic+": "+m.Message)
			}
			return out
		},
		"dingtalk": func() []string {
			var out []string
			for _, m := range s.ding.Messages() {
				out = append(out, m.Content+m.Text)
			}
			return out
		},
	}
	for _, bot := range []push.Bot{s.relay, s.work} {
		for i, tt := range tests {
			t.Run(bot.Platform+" "+tt.name, func(t *testing.T) {
				before := received[bot.Platform]()
				content := fmt.Sprintf("%s %d", bot.Platform, i)
				r := s.h.Call(t, "POST", tt.path, s.key, fmt.Sprintf(tt.body, bot.ID, content))
				d := data(r)
				if r.Status != http.StatusOK || r.JSON()["code"] != 0.0 || d["status"] != "SUCCESS" || d["bot"] != float64(bot.ID) || d["content"] != content {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				j := s.h.Call(t, "GET", "/openapi/queue/"+d["jobId"].(string), s.key, nil)
				if jd := data(j); jd["status"] != "succeeded" || jd["targetId"] != nil || jd["success"] != true {
					t.Fatalf("job: %s", j.Body)
				}
				// The platform received exactly this one message.
				after := received[bot.Platform]()
				want := content
				if bot.Platform == "ntfy" {
					want = "alerts: " + content
				}
				if len(after) != len(before)+1 || !strings.Contains(after[len(after)-1], want) {
					t.Fatalf("%s received %q after %q, want one more: %q", bot.Platform, after, before, want)
				}
			})
		}
	}
}

// Naming any target for a bot without targets is refused with 400 saying
// so; batch endpoints are refused with 400 telling to use a single send.
// Nothing is charged, queued or sent.
func TestTargetlessRefusals(t *testing.T) {
	s := newTargetless(t, testkit.WithPoints(push.Points{Enabled: true}))
	tests := []struct {
		name   string
		path   string
		body   string // %[1]d: the targetless bot, %[2]d: the Telegram bot, %[3]d: its target
		reason string
	}{
		{"4.1 a bound target's id", "/openapi/v1/push/private", `{"botId":%[1]d,"target":"%[3]d","content":"x"}`, "platform_has_no_targets"},
		{"4.1 a malformed target", "/openapi/v1/push/private", `{"botId":%[1]d,"target":"ops-channel","content":"x"}`, "platform_has_no_targets"},
		{"4.1 target 0", "/openapi/v1/push/private", `{"botId":%[1]d,"target":"0","content":"x"}`, "platform_has_no_targets"},
		{"4.2 a target id", "/openapi/send", `{"bot_id":%[1]d,"target_id":%[3]d,"content":"x"}`, "platform_has_no_targets"},
		{"4.2 a negative target id", "/openapi/send", `{"bot_id":%[1]d,"target_id":-4,"content":"x"}`, "platform_has_no_targets"},
		{"4.3 with targets", "/openapi/batch-send", `{"bot_id":%[1]d,"target_ids":[%[3]d],"content":"x"}`, "use_single_send"},
		{"4.3 with target 0", "/openapi/batch-send", `{"bot_id":%[1]d,"target_ids":[0],"content":"x"}`, "use_single_send"},
		{"4.3 with a negative target", "/openapi/batch-send", `{"bot_id":%[1]d,"target_ids":[-1],"content":"x"}`, "use_single_send"},
		{"4.3 with an empty list", "/openapi/batch-send", `{"bot_id":%[1]d,"target_ids":[],"content":"x"}`, "use_single_send"},
		{"4.3 without target_ids", "/openapi/batch-send", `{"bot_id":%[1]d,"content":"x"}`, "use_single_send"},
		{"4.4 a group of its own", "/openapi/v1/push/batch", `{"bots":[{"botId":%[1]d,"targets":["%[3]d"]}],"content":"x"}`, "use_single_send"},
		{"4.4 next to a Telegram group", "/openapi/v1/push/batch", `{"bots":[{"botId":%[2]d,"targets":["%[3]d"]},{"bot_id":%[1]d,"targets":["1"]}],"content":"x"}`, "use_single_send"},
		{"4.4 with empty targets", "/openapi/v1/push/batch", `{"bots":[{"botId":%[1]d,"targets":[]}],"content":"x"}`, "use_single_send"},
		{"4.4 with a malformed target", "/openapi/v1/push/batch", `{"bots":[{"botId":%[1]d,"targets":["all"]}],"content":"x"}`, "use_single_send"},
	}
	for _, bot := range []push.Bot{s.relay, s.work} {
		for i, tt := range tests {
			t.Run(bot.Platform+" "+tt.name, func(t *testing.T) {
				r := s.h.Call(t, "POST", tt.path, s.key, fmt.Sprintf(tt.body, bot.ID, s.tg.ID, s.target.ID), "Idempotency-Key", fmt.Sprintf("refused-%s-%d", bot.Platform, i))
				body := r.JSON()
				if r.Status != http.StatusBadRequest || body["error"] != tt.reason || body["code"] != 400.0 {
					t.Fatalf("%d %s; want 400 %s", r.Status, r.Body, tt.reason)
				}
				msg := body["message"].(string)
				if !strings.Contains(msg, "has no targets") || !strings.Contains(msg, bot.Platform) {
					t.Errorf("message %q does not say that %s has no targets", msg, bot.Platform)
				}
				if tt.reason == "use_single_send" && !strings.Contains(msg, "single send") {
					t.Errorf("message %q does not tell to use a single send", msg)
				}
			})
		}
	}
	if s.ntfy.Requests() != 0 || s.ding.Requests() != 0 || len(s.h.Telegram.Messages()) != 0 {
		t.Errorf("refused requests were sent: ntfy %d, dingtalk %d, telegram %d", s.ntfy.Requests(), s.ding.Requests(), len(s.h.Telegram.Messages()))
	}
	if n := s.h.CountJobs(t); n != 0 {
		t.Errorf("%d jobs after refused requests", n)
	}
	if b := s.h.Balance(t, s.acct.ID); b != 100 {
		t.Errorf("balance %d after refused requests, want 100", b)
	}
	// A refused key was not used: it can send now.
	r := s.h.Call(t, "POST", "/openapi/v1/push/private", s.key, map[string]any{"botId": s.relay.ID, "content": "x"}, "Idempotency-Key", "refused-ntfy-0")
	if r.Status != http.StatusOK {
		t.Errorf("the key of a refused request: %d %s", r.Status, r.Body)
	}
	// A bot with targets still needs one.
	for _, body := range []string{`{"botId":%d,"content":"x"}`, `{"botId":%d,"target":"","content":"x"}`} {
		r := s.h.Call(t, "POST", "/openapi/v1/push/private", s.key, fmt.Sprintf(body, s.tg.ID))
		if r.Status != http.StatusBadRequest || r.JSON()["error"] != "missing_target" {
			t.Errorf("telegram without a target: %d %s", r.Status, r.Body)
		}
	}
	if r := s.h.Call(t, "POST", "/openapi/send", s.key, fmt.Sprintf(`{"bot_id":%d,"target_id":0,"content":"x"}`, s.tg.ID)); r.Status != http.StatusBadRequest || r.JSON()["error"] != "missing_target" {
		t.Errorf("telegram with target_id 0: %d %s", r.Status, r.Body)
	}
	if r := s.h.Call(t, "POST", "/openapi/v1/push/private", s.key, fmt.Sprintf(`{"botId":%d,"target":"abc","content":"x"}`, s.tg.ID)); r.Status != http.StatusBadRequest || r.JSON()["error"] != "invalid_target_id" {
		t.Errorf("telegram with a malformed target: %d %s", r.Status, r.Body)
	}
	// Another account's bot is still 404, whatever the target.
	other := s.h.Account(t, "other")
	otherKey := s.h.Key(t, other.ID)
	if r := s.h.Call(t, "POST", "/openapi/v1/push/private", otherKey, fmt.Sprintf(`{"botId":%d,"target":"x","content":"x"}`, s.relay.ID)); r.Status != http.StatusBadRequest || r.JSON()["error"] != "invalid_target_id" {
		t.Errorf("another account's targetless bot with a malformed target: %d %s", r.Status, r.Body)
	}
	if r := s.h.Call(t, "POST", "/openapi/v1/push/private", otherKey, fmt.Sprintf(`{"botId":%d,"content":"x"}`, s.relay.ID)); r.Status != http.StatusNotFound {
		t.Errorf("another account's targetless bot: %d %s", r.Status, r.Body)
	}
	// Binding a target is refused too.
	_, err := s.h.Engine.Targets().Bind(context.Background(), push.System(), push.Target{BotID: s.relay.ID, Type: push.TargetGroup, Address: "alerts"})
	if push.ReasonOf(err) != "platform_has_no_targets" {
		t.Errorf("bind a target to an ntfy bot: %v", err)
	}
}

// Idempotency works as for any bot: a replay returns the original job and
// sends nothing, another message under the key is a conflict, and leaving
// the target out or empty is the same request.
func TestTargetlessIdempotency(t *testing.T) {
	s := newTargetless(t)
	send := func(path, body, key string) testkit.Response {
		return s.h.Call(t, "POST", path, s.key, fmt.Sprintf(body, s.relay.ID), "Idempotency-Key", key)
	}
	first := send("/openapi/v1/push/private", `{"botId":%d,"content":"deployed v42"}`, "deploy-42")
	if first.Status != http.StatusOK {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	for _, again := range []struct{ path, body string }{
		{"/openapi/v1/push/private", `{"botId":%d,"content":"deployed v42"}`},
		{"/openapi/v1/push/private", `{"botId":%d,"target":"","content":"deployed v42"}`},
		{"/openapi/send", `{"bot_id":%d,"target_id":0,"content":"deployed v42"}`},
	} {
		r := send(again.path, again.body, "deploy-42")
		if r.Status != http.StatusOK || r.Header.Get("Idempotency-Replay") != "true" || data(r)["jobId"] != data(first)["jobId"] {
			t.Fatalf("replay %s: %d %s", again.body, r.Status, r.Body)
		}
	}
	if r := send("/openapi/v1/push/private", `{"botId":%d,"content":"deployed v43"}`, "deploy-42"); r.Status != http.StatusConflict || r.JSON()["error"] != "idempotency_conflict" {
		t.Fatalf("another message under the key: %d %s", r.Status, r.Body)
	}
	if n := s.ntfy.Requests(); n != 1 {
		t.Fatalf("ntfy got %d requests, want 1", n)
	}
	k := s.h.Call(t, "GET", "/openapi/queue-request?key=deploy-42", s.key, nil)
	if d := data(k); k.Status != http.StatusOK || d["jobId"] != data(first)["jobId"] || d["status"] != "succeeded" || d["targetId"] != nil {
		t.Fatalf("queue-request: %d %s", k.Status, k.Body)
	}
}

// Points, the backlog and job states apply as for any bot.
func TestTargetlessPointsBacklogStates(t *testing.T) {
	s := newTargetless(t, testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond, BacklogPerBot: 2, RatePerMinute: -1}))
	if _, err := s.h.Engine.Ledger().SetBalance(context.Background(), push.System(), s.acct.ID, 3); err != nil {
		t.Fatal(err)
	}
	send := func(content string) testkit.Response {
		return s.h.Call(t, "POST", "/openapi/v1/push/private", s.key, map[string]any{"botId": s.relay.ID, "content": content})
	}
	s.ntfy.Block()
	var jobs []string
	for i := 0; i < 2; i++ {
		r := send(fmt.Sprint("slow ", i))
		if d := data(r); r.Status != http.StatusAccepted || d["pending"] != true || d["uncertain"] != false {
			t.Fatalf("send %d while ntfy is blocked: %d %s", i, r.Status, r.Body)
		}
		jobs = append(jobs, data(r)["jobId"].(string))
	}
	// The bot's backlog is full: refused, nothing charged.
	if r := send("third"); r.Status != http.StatusTooManyRequests || r.JSON()["error"] != "backlog_full" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("third send: %d %s", r.Status, r.Body)
	}
	if b := s.h.Balance(t, s.acct.ID); b != 1 {
		t.Fatalf("balance %d, want 1", b)
	}
	if r := s.h.Call(t, "GET", "/openapi/queue/"+jobs[0], s.key, nil); data(r)["pending"] != true || data(r)["success"] != nil {
		t.Fatalf("a pending job: %s", r.Body)
	}
	s.ntfy.Unblock()
	for _, id := range jobs {
		if j := s.h.Settled(t, id, 5*time.Second); j.State != push.StateSucceeded {
			t.Fatalf("job %s: %s %s", id, j.State, j.Error)
		}
	}
	if r := s.h.Call(t, "GET", "/openapi/queue/"+jobs[1], s.key, nil); data(r)["status"] != "succeeded" || data(r)["platformIndex"] == "" {
		t.Fatalf("a settled job: %s", r.Body)
	}
	// The last point pays for one more; then the balance is short.
	if r := send("last point"); r.Status != http.StatusOK {
		t.Fatalf("send with 1 point: %d %s", r.Status, r.Body)
	}
	if r := send("no points"); r.Status != http.StatusBadRequest || r.JSON()["error"] != "insufficient_points" {
		t.Fatalf("send with 0 points: %d %s", r.Status, r.Body)
	}
	if b := s.h.Balance(t, s.acct.ID); b != 0 {
		t.Fatalf("balance %d, want 0", b)
	}

	// Outcomes: uncertain and failed are reported as for any bot.
	if _, err := s.h.Engine.Ledger().SetBalance(context.Background(), push.System(), s.acct.ID, 10); err != nil {
		t.Fatal(err)
	}
	s.ntfy.DropNext(1)
	r := send("dropped")
	if d := data(r); r.Status != http.StatusAccepted || d["uncertain"] != true || d["status"] != "UNCERTAIN" {
		t.Fatalf("dropped: %d %s", r.Status, r.Body)
	}
	s.ntfy.Fail(fake.NtfyFault(403, 40301, "forbidden"))
	r = send("refused")
	if r.Status != http.StatusInternalServerError || r.JSON()["error"] != "platform_failed" || !strings.Contains(r.JSON()["message"].(string), "forbidden") || data(r)["status"] != "FAILED" {
		t.Fatalf("refused: %d %s", r.Status, r.Body)
	}
}

// The API key's rate limit counts sends to bots without targets.
func TestTargetlessRateLimit(t *testing.T) {
	s := newTargetless(t, testkit.WithLimits(push.Limits{RatePerMinute: 3}))
	for i := 0; i < 4; i++ {
		r := s.h.Call(t, "POST", "/openapi/send", s.key, map[string]any{"bot_id": s.work.ID, "content": fmt.Sprint("m", i)})
		want := http.StatusOK
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if r.Status != want {
			t.Fatalf("send %d: %d %s", i, r.Status, r.Body)
		}
		if i == 3 && (r.JSON()["error"] != "rate_limited" || r.Header.Get("Retry-After") == "") {
			t.Fatalf("rate limited: %s", r.Body)
		}
	}
	if n := len(s.ding.Messages()); n != 3 {
		t.Fatalf("dingtalk posted %d, want 3", n)
	}
}
