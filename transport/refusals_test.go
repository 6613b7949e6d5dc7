package transport_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestRefusals sends every kind of bad request and checks the status, the
// stable reason, that the message says what is wrong, and that nothing was
// charged, queued or sent.
func TestRefusals(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}), testkit.WithLimits(push.Limits{RatePerMinute: -1}))
	f := h.Seed(t)
	other := h.Account(t, "other")
	otherBot := h.TelegramBot(t, other.ID)
	otherTarget := h.Target(t, otherBot.ID, push.TargetUser, "")
	revoked := h.Key(t, f.Account.ID)
	keys, _ := h.Engine.Keys().List(t.Context(), push.System(), push.KeyFilter{AccountID: f.Account.ID})
	if _, err := h.Engine.Keys().Revoke(t.Context(), push.System(), keys.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	_, plainExpiring, err := h.Engine.Keys().Create(t.Context(), push.System(), push.KeyCreate{AccountID: f.Account.ID, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(2 * time.Minute)
	suspended := h.Account(t, "suspended")
	suspendedKey := h.Key(t, suspended.ID)
	status := push.AccountSuspended
	if _, err := h.Engine.Accounts().Update(t.Context(), push.System(), suspended.ID, push.AccountUpdate{Status: &status}); err != nil {
		t.Fatal(err)
	}
	bot, target := f.Bot.ID, itoa(f.Target.ID)
	long := strings.Repeat("字", 2001)
	fiftyOne := make([]int64, 51)
	fiftyOneStr := make([]string, 51)
	for i := range fiftyOne {
		fiftyOne[i] = int64(i + 1)
		fiftyOneStr[i] = itoa(int64(i + 1))
	}
	const (
		private = "/openapi/v1/push/private"
		compat  = "/openapi/send"
		batch   = "/openapi/batch-send"
		multi   = "/openapi/v1/push/batch"
	)
	tests := []struct {
		name   string
		path   string
		key    string
		body   any
		header []string
		status int
		reason string
		says   string // the message must contain this
	}{
		// authentication
		{"no key", private, "", map[string]any{"botId": bot, "target": target, "content": "x"}, nil, 401, "missing_api_key", "Authorization: Bearer"},
		{"unknown key", private, "hrd_" + strings.Repeat("A", 40), map[string]any{"botId": bot, "content": "x"}, nil, 401, "invalid_api_key", "not valid"},
		{"foreign prefix", private, "xyz_" + strings.Repeat("A", 40), map[string]any{"botId": bot, "content": "x"}, nil, 401, "invalid_api_key", "not valid"},
		{"not bearer", private, "", map[string]any{"botId": bot}, []string{"Authorization", "Basic abc"}, 401, "invalid_authorization", "Bearer"},
		{"revoked key", private, revoked, map[string]any{"botId": bot, "target": target, "content": "x"}, nil, 403, "key_revoked", "revoked"},
		{"expired key", private, plainExpiring, map[string]any{"botId": bot, "target": target, "content": "x"}, nil, 403, "key_expired", "expired"},
		{"suspended account", private, suspendedKey, map[string]any{"botId": bot, "target": target, "content": "x"}, nil, 403, "account_suspended", "suspended"},
		// malformed bodies
		{"empty body", private, f.Key, "", nil, 400, "empty_body", "empty"},
		{"malformed json", private, f.Key, `{"botId": 1,`, nil, 400, "invalid_json", "not valid JSON"},
		{"syntax error", private, f.Key, `{"botId": 1 "x"}`, nil, 400, "invalid_json", "not valid JSON"},
		{"array body", private, f.Key, `[1,2]`, nil, 400, "invalid_json", "JSON object"},
		{"trailing data", private, f.Key, `{"botId":1} {"x":2}`, nil, 400, "invalid_json", "after the JSON object"},
		{"string botId", private, f.Key, `{"botId":"1","target":"1","content":"x"}`, nil, 400, "invalid_json", "botId must be an integer"},
		{"float botId", private, f.Key, `{"botId":1.5,"target":"1","content":"x"}`, nil, 400, "invalid_json", "botId must be an integer"},
		{"numeric target", private, f.Key, `{"botId":1,"target":1,"content":"x"}`, nil, 400, "invalid_json", "target must be a string"},
		{"string msgType", private, f.Key, `{"botId":1,"target":"1","content":"x","msgType":"2"}`, nil, 400, "invalid_json", "msgType must be an integer"},
		{"number content", private, f.Key, `{"botId":1,"target":"1","content":5}`, nil, 400, "invalid_json", "content must be a string"},
		{"string isWakeup", private, f.Key, `{"botId":1,"target":"1","content":"x","isWakeup":"yes"}`, nil, 400, "invalid_json", "isWakeup must be true or false"},
		{"missing botId", private, f.Key, map[string]any{"target": target, "content": "x"}, nil, 400, "missing_field", "botId is required"},
		// message rules
		{"unknown msgType", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x", "msgType": 3}, nil, 400, "invalid_msg_type", "msgType 3"},
		{"empty message", private, f.Key, map[string]any{"botId": bot, "target": target}, nil, 400, "empty_message", "empty"},
		{"blank message", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "  \n "}, nil, 400, "empty_message", "empty"},
		{"image without url", private, f.Key, map[string]any{"botId": bot, "target": target, "msgType": 7}, nil, 400, "missing_image_url", "imageUrl"},
		{"bad image url", private, f.Key, map[string]any{"botId": bot, "target": target, "imageUrl": "file:///etc/passwd"}, nil, 400, "invalid_image_url", "http or https"},
		{"too long", private, f.Key, map[string]any{"botId": bot, "target": target, "content": long}, nil, 400, "content_too_long", "2001 characters"},
		{"caption over telegram's limit", private, f.Key, map[string]any{"botId": bot, "target": target, "imageUrl": "https://e.com/a.png", "content": strings.Repeat("x", 1025)}, nil, 400, "caption_too_long", "1024"},
		// targets
		{"non-numeric target", private, f.Key, map[string]any{"botId": bot, "target": "abc", "content": "x"}, nil, 400, "invalid_target_id", "not a target id"},
		{"negative target", private, f.Key, map[string]any{"botId": bot, "target": "-3", "content": "x"}, nil, 400, "invalid_target_id", "not a target id"},
		{"missing target", private, f.Key, map[string]any{"botId": bot, "content": "x"}, nil, 400, "missing_target", "needs a target"},
		{"bad targetType", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x", "targetType": "channel"}, nil, 400, "invalid_target_type", "user"},
		{"targetType mismatch", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x", "targetType": "group"}, nil, 400, "target_type_mismatch", "bound as a user"},
		{"unknown bot", private, f.Key, map[string]any{"botId": 999, "target": target, "content": "x"}, nil, 404, "bot_not_found", "bot 999"},
		{"other account's bot", private, f.Key, map[string]any{"botId": otherBot.ID, "target": itoa(otherTarget.ID), "content": "x"}, nil, 404, "bot_not_found", "does not exist"},
		{"other bot's target", private, f.Key, map[string]any{"botId": bot, "target": itoa(otherTarget.ID), "content": "x"}, nil, 404, "target_not_found", "not bound"},
		{"unknown target", private, f.Key, map[string]any{"botId": bot, "target": "9999", "content": "x"}, nil, 404, "target_not_found", "not bound"},
		// idempotency keys
		{"bad idempotency key", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x"}, []string{"Idempotency-Key", "has space"}, 400, "invalid_idempotency_key", "letters, digits"},
		{"long idempotency key", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x"}, []string{"Idempotency-Key", strings.Repeat("k", 101)}, 400, "invalid_idempotency_key", "101"},
		{"empty idempotency key", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x"}, []string{"Idempotency-Key", ""}, 400, "invalid_idempotency_key", "empty"},
		{"two idempotency keys", private, f.Key, map[string]any{"botId": bot, "target": target, "content": "x"}, []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, 400, "invalid_idempotency_key", "one Idempotency-Key"},
		// compatibility endpoint
		{"compat string target_id", compat, f.Key, `{"bot_id":1,"target_id":"1","content":"x"}`, nil, 400, "invalid_json", "target_id must be an integer"},
		{"compat missing bot_id", compat, f.Key, map[string]any{"target_id": 1, "content": "x"}, nil, 400, "missing_field", "bot_id is required"},
		{"compat zero target_id", compat, f.Key, map[string]any{"bot_id": bot, "target_id": 0, "content": "x"}, nil, 400, "missing_target", "needs a target"},
		// each endpoint names the fields as its request does
		{"compat unknown msg_type", compat, f.Key, map[string]any{"bot_id": bot, "target_id": f.Target.ID, "content": "x", "msg_type": 3}, nil, 400, "invalid_msg_type", "msg_type 3 is not supported"},
		{"compat image without image_url", compat, f.Key, map[string]any{"bot_id": bot, "target_id": f.Target.ID, "msg_type": 7}, nil, 400, "missing_image_url", "needs an image_url"},
		{"compat bad image_url", compat, f.Key, map[string]any{"bot_id": bot, "target_id": f.Target.ID, "image_url": "ftp://x/y.png"}, nil, 400, "invalid_image_url", "the image_url"},
		{"compat unknown target_id", compat, f.Key, map[string]any{"bot_id": bot, "target_id": 9999, "content": "x"}, nil, 404, "target_not_found", "check the target_id"},
		{"compat unknown bot_id", compat, f.Key, map[string]any{"bot_id": 999, "target_id": 1, "content": "x"}, nil, 404, "bot_not_found", "check the bot_id"},
		{"v1 unknown botId", private, f.Key, map[string]any{"botId": 999, "target": "1", "content": "x"}, nil, 404, "bot_not_found", "check the botId"},
		{"v1 bad imageUrl", private, f.Key, map[string]any{"botId": bot, "target": target, "imageUrl": "ftp://x/y.png"}, nil, 400, "invalid_image_url", "the imageUrl"},
		{"batch unknown msg_type", batch, f.Key, map[string]any{"bot_id": bot, "target_ids": []int64{f.Target.ID}, "content": "x", "msg_type": 5}, nil, 400, "invalid_msg_type", "msg_type 5"},
		{"multi unknown msgType", multi, f.Key, map[string]any{"bots": []any{map[string]any{"botId": bot, "targets": []string{target}}}, "content": "x", "msgType": 5}, nil, 400, "invalid_msg_type", "msgType 5"},
		// batch-send
		{"batch empty targets", batch, f.Key, map[string]any{"bot_id": bot, "target_ids": []int64{}, "content": "x"}, nil, 400, "missing_targets", "empty"},
		{"batch missing targets", batch, f.Key, map[string]any{"bot_id": bot, "content": "x"}, nil, 400, "missing_field", "target_ids is required"},
		{"batch 51 targets", batch, f.Key, map[string]any{"bot_id": bot, "target_ids": fiftyOne, "content": "x"}, nil, 400, "too_many_targets", "51 targets"},
		{"batch string ids", batch, f.Key, `{"bot_id":1,"target_ids":["1"],"content":"x"}`, nil, 400, "invalid_json", "target_ids must be a list of integers"},
		{"batch duplicate target", batch, f.Key, map[string]any{"bot_id": bot, "target_ids": []int64{f.Target.ID, f.Target.ID}, "content": "x"}, nil, 400, "duplicate_target", "more than once"},
		{"batch one unknown target", batch, f.Key, map[string]any{"bot_id": bot, "target_ids": []int64{f.Target.ID, 9999}, "content": "x"}, nil, 404, "target_not_found", "9999"},
		// multi-bot batch
		{"multi no bots", multi, f.Key, map[string]any{"bots": []any{}, "content": "x"}, nil, 400, "missing_bots", "bots is empty"},
		{"multi missing bots", multi, f.Key, map[string]any{"content": "x"}, nil, 400, "missing_field", "bots is required"},
		{"multi empty targets", multi, f.Key, map[string]any{"bots": []any{map[string]any{"botId": bot, "targets": []string{}}}, "content": "x"}, nil, 400, "missing_targets", "bots[0].targets is empty"},
		{"multi missing botId", multi, f.Key, map[string]any{"bots": []any{map[string]any{"targets": []string{target}}}, "content": "x"}, nil, 400, "missing_field", "bots[0].botId"},
		{"multi non-numeric target", multi, f.Key, map[string]any{"bots": []any{map[string]any{"botId": bot, "targets": []string{"x1"}}}, "content": "x"}, nil, 400, "invalid_target_id", "bots[0].targets"},
		{"multi numeric targets", multi, f.Key, `{"bots":[{"botId":1,"targets":[1]}],"content":"x"}`, nil, 400, "invalid_json", "must be a list of strings"},
		{"multi 51 targets", multi, f.Key, map[string]any{"bots": []any{
			map[string]any{"botId": bot, "targets": fiftyOneStr[:30]},
			map[string]any{"botId": bot, "targets": fiftyOneStr[30:]},
		}, "content": "x"}, nil, 400, "too_many_targets", "51 targets"},
		{"multi other account's bot", multi, f.Key, map[string]any{"bots": []any{
			map[string]any{"botId": bot, "targets": []string{target}},
			map[string]any{"botId": otherBot.ID, "targets": []string{itoa(otherTarget.ID)}},
		}, "content": "x"}, nil, 404, "bot_not_found", "does not exist"},
		// points
		{"insufficient points", batch, f.Key, map[string]any{"bot_id": bot, "target_ids": manyTargets(t, h, f), "content": "x"}, nil, 400, "insufficient_points", "needs"},
	}
	startBalance := h.Balance(t, f.Account.ID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.Call(t, "POST", tt.path, tt.key, tt.body, tt.header...)
			var e errAnswer
			r.Decode(t, &e)
			if r.Status != tt.status || e.Code != tt.status || e.Error != tt.reason || !strings.Contains(e.Message, tt.says) {
				t.Fatalf("got %d %s; want %d %s with %q in the message", r.Status, r.Body, tt.status, tt.reason, tt.says)
			}
		})
	}
	if n := h.CountJobs(t); n != 0 {
		t.Fatalf("refused requests stored %d jobs", n)
	}
	if got := h.Balance(t, f.Account.ID); got != startBalance {
		t.Fatalf("balance %d after refusals, want %d", got, startBalance)
	}
	if n := h.Telegram.Requests(); n != 0 {
		t.Fatalf("refused requests reached the platform %d times", n)
	}
	if q, ok := h.Queue.(interface{ Len() int }); ok && q.Len() != 0 {
		t.Fatalf("refused requests queued %d ids", q.Len())
	}
}

// manyTargets binds more targets than the account has points for.
func manyTargets(t *testing.T, h *testkit.Herald, f testkit.Fixture) []int64 {
	t.Helper()
	if _, err := h.Engine.Ledger().SetBalance(t.Context(), push.System(), f.Account.ID, 2); err != nil {
		t.Fatal(err)
	}
	ids := []int64{f.Target.ID}
	for i := 0; i < 2; i++ {
		ids = append(ids, h.Target(t, f.Bot.ID, push.TargetUser, "").ID)
	}
	return ids
}

func TestRoutingRefusals(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	tests := []struct {
		method, path, key string
		status            int
		reason            string
	}{
		{"GET", "/nope", "", 404, "route_not_found"},
		{"GET", "/openapi/v1/push/private", f.Key, 405, "method_not_allowed"},
		// The auth middleware runs before the 405 of its group.
		{"GET", "/openapi/v1/push/private", "", 401, "missing_api_key"},
		{"GET", "/openapi/queue/not-a-uuid", f.Key, 400, "invalid_job_id"},
		{"GET", "/openapi/queue/0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10", f.Key, 404, "job_not_found"},
		{"GET", "/openapi/queue-request", f.Key, 400, "missing_field"},
		{"GET", "/openapi/queue-request?key=bad%20key", f.Key, 400, "invalid_idempotency_key"},
		{"POST", "/openapi/queue/0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10/cancel", f.Key, 404, "job_not_found"},
		// Found by FuzzRequestDecoders: a NUL in the path panicked the router.
		{"GET", "/openapi/queue/%00", f.Key, 400, "invalid_path"},
		{"GET", "/openapi/%01x", "", 400, "invalid_path"},
	}
	for _, tt := range tests {
		r := h.Call(t, tt.method, tt.path, tt.key, nil)
		var e errAnswer
		r.Decode(t, &e)
		if r.Status != tt.status || e.Error != tt.reason || e.Message == "" {
			t.Errorf("%s %s: %d %s; want %d %s", tt.method, tt.path, r.Status, r.Body, tt.status, tt.reason)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	big := `{"botId":1,"target":"1","content":"` + strings.Repeat("x", 2<<20) + `"}`
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, big)
	var e errAnswer
	r.Decode(t, &e)
	if r.Status != http.StatusRequestEntityTooLarge || e.Error != "body_too_large" || !strings.Contains(e.Message, "larger than 1048576 bytes") {
		t.Fatalf("2 MiB body: %d %s", r.Status, r.Body)
	}
	if h.CountJobs(t) != 0 || h.Balance(t, f.Account.ID) != 100 || h.Telegram.Requests() != 0 {
		t.Fatalf("a refused body: %d jobs, balance %d, %d platform requests", h.CountJobs(t), h.Balance(t, f.Account.ID), h.Telegram.Requests())
	}
}

// fixedClock stands still, so that a rate limit does not refill while a
// test makes its requests, however slow the machine.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// withFrozenRateLimit gives the engine a rate limiter on a clock that
// stands still.
func withFrozenRateLimit() testkit.Option {
	return testkit.WithEngineOptions(func(o *push.Options) {
		o.RateLimiter = push.NewLocalRateLimiter(fixedClock{time.Now()})
	})
}

func TestRateLimit(t *testing.T) {
	h := testkit.New(t, withFrozenRateLimit())
	f := h.Seed(t)
	for i := 1; i <= 120; i++ {
		r := h.Call(t, "GET", "/openapi/queue-request?key=k", f.Key, nil)
		if r.Status != 200 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
		if i == 1 && (r.Header.Get("RateLimit-Limit") != "120" || r.Header.Get("RateLimit-Remaining") != "119") {
			t.Fatalf("rate headers: %v", r.Header)
		}
	}
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "121st"})
	var e errAnswer
	r.Decode(t, &e)
	if r.Status != http.StatusTooManyRequests || e.Error != "rate_limited" || r.Header.Get("Retry-After") != "1" || r.Header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("121st request: %d %v %s", r.Status, r.Header, r.Body)
	}
	if h.CountJobs(t) != 0 || h.Telegram.Requests() != 0 {
		t.Fatal("a rate-limited send was stored or sent")
	}
	// Another key of the same account has its own limit.
	if r := h.Call(t, "GET", "/openapi/queue-request?key=k", h.Key(t, f.Account.ID), nil); r.Status != 200 {
		t.Fatalf("another key: %d", r.Status)
	}
}

func TestLegacyKeyPrefix(t *testing.T) {
	h := testkit.New(t, testkit.WithEngineOptions(func(o *push.Options) { o.LegacyKeyPrefixes = []string{"msp"} }))
	f := h.Seed(t)
	legacy := "msp_" + strings.Repeat("Z", 32)
	if _, err := h.Engine.Keys().Import(t.Context(), push.System(), push.KeyCreate{AccountID: f.Account.ID}, legacy); err != nil {
		t.Fatal(err)
	}
	r := h.Call(t, "GET", "/openapi/queue-request?key=k", legacy, nil)
	if r.Status != 200 {
		t.Fatalf("legacy key: %d %s", r.Status, r.Body)
	}
	if _, err := h.Engine.Keys().Import(t.Context(), push.System(), push.KeyCreate{AccountID: f.Account.ID}, "zzz_"+strings.Repeat("Z", 32)); push.KindOf(err) != push.Invalid {
		t.Fatalf("importing an unconfigured prefix: %v", err)
	}
}

func TestDrainingAnswers503(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	h.Engine.Drain()
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "x"})
	var e errAnswer
	r.Decode(t, &e)
	if r.Status != 503 || e.Error != "draining" || r.Header.Get("Retry-After") == "" || !strings.Contains(e.Message, "same Idempotency-Key") {
		t.Fatalf("send while draining: %d %v %s", r.Status, r.Header, r.Body)
	}
	if q := h.Call(t, "GET", "/openapi/queue-request?key=x", f.Key, nil); q.Status != 200 {
		t.Fatalf("query while draining: %d", q.Status)
	}
}

func TestRequestID(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	r := h.Call(t, "GET", "/openapi/queue-request?key=k", f.Key, nil, "X-Request-Id", "trace-123")
	if r.Header.Get("X-Request-Id") != "trace-123" {
		t.Fatalf("X-Request-Id echoed as %q", r.Header.Get("X-Request-Id"))
	}
	if r := h.Call(t, "GET", "/nope", "", nil); len(r.Header.Get("X-Request-Id")) != 16 {
		t.Fatalf("generated X-Request-Id %q", r.Header.Get("X-Request-Id"))
	}
}
