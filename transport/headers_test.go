package transport_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestReplaysAnswerIdempotencyReplay resubmits each kind of send with its
// key: the first answer has no Idempotency-Replay, the replay has
// "Idempotency-Replay: true", the same body, and nothing is sent again.
func TestReplaysAnswerIdempotencyReplay(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	t2 := h.Target(t, f.Bot.ID, push.TargetUser, "")
	tid, t2id := strconv.FormatInt(f.Target.ID, 10), strconv.FormatInt(t2.ID, 10)
	tests := []struct {
		name, path string
		body       map[string]any
		sent       int
	}{
		{"private", "/openapi/v1/push/private", map[string]any{"botId": f.Bot.ID, "target": tid, "content": "p"}, 1},
		{"compat", "/openapi/send", map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "content": "c"}, 1},
		{"batch-send", "/openapi/batch-send", map[string]any{"bot_id": f.Bot.ID, "target_ids": []int64{f.Target.ID, t2.ID}, "content": "b"}, 2},
		{"multi-bot batch", "/openapi/v1/push/batch", map[string]any{"bots": []any{map[string]any{"botId": f.Bot.ID, "targets": []string{tid, t2id}}}, "content": "m"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(h.Telegram.Messages())
			key := "replay-" + tt.name[:4]
			first := h.Call(t, "POST", tt.path, f.Key, tt.body, "Idempotency-Key", key)
			again := h.Call(t, "POST", tt.path, f.Key, tt.body, "Idempotency-Key", key)
			if first.Status != 200 || again.Status != 200 {
				t.Fatalf("statuses %d, %d: %s", first.Status, again.Status, again.Body)
			}
			if first.Header.Get("Idempotency-Replay") != "" || again.Header.Get("Idempotency-Replay") != "true" {
				t.Fatalf("Idempotency-Replay: first %q, replay %q", first.Header.Get("Idempotency-Replay"), again.Header.Get("Idempotency-Replay"))
			}
			if string(first.Body) != string(again.Body) {
				t.Fatalf("the replay answered differently:\n%s\n%s", first.Body, again.Body)
			}
			if n := len(h.Telegram.Messages()) - before; n != tt.sent {
				t.Fatalf("%d messages sent, want %d", n, tt.sent)
			}
		})
	}
	// A replay while the batch is still pending also says so.
	slow := testkit.New(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}))
	sf := slow.Seed(t)
	body := map[string]any{"bot_id": sf.Bot.ID, "target_ids": []int64{sf.Target.ID}, "content": "later"}
	first := slow.Call(t, "POST", "/openapi/batch-send", sf.Key, body, "Idempotency-Key", "pending-1")
	again := slow.Call(t, "POST", "/openapi/batch-send", sf.Key, body, "Idempotency-Key", "pending-1")
	if first.Status != 202 || again.Status != 202 || again.Header.Get("Idempotency-Replay") != "true" || first.Header.Get("Idempotency-Replay") != "" {
		t.Fatalf("pending batch replay: %d %d %v", first.Status, again.Status, again.Header)
	}
}

// TestEvery429And503CarriesRetryAfter covers each way to a 429 or a 503,
// and the RateLimit-* headers of a rate-limited answer.
func TestEvery429And503CarriesRetryAfter(t *testing.T) {
	type setup struct {
		t    *testing.T
		h    *testkit.Herald
		f    testkit.Fixture
		body map[string]any
	}
	tests := []struct {
		name   string
		opts   []testkit.Option
		prime  func(s setup) // requests that are admitted
		status int
		reason string
	}{
		{"rate limited", []testkit.Option{withFrozenRateLimit(), testkit.WithLimits(push.Limits{RatePerMinute: 2})},
			func(s setup) {
				for range 2 {
					if r := s.h.Call(s.t, "GET", "/openapi/queue-request?key=k", s.f.Key, nil); r.Status != 200 {
						s.t.Fatalf("admitted request: %d", r.Status)
					}
				}
			}, 429, "rate_limited"},
		{"backlog of the bot full", []testkit.Option{testkit.WithoutStart(), testkit.WithLimits(push.Limits{BacklogPerBot: 1, SyncWait: time.Millisecond})},
			func(s setup) {
				if r := s.h.Call(s.t, "POST", "/openapi/v1/push/private", s.f.Key, s.body); r.Status != 202 {
					s.t.Fatalf("first send: %d %s", r.Status, r.Body)
				}
			}, 429, "backlog_full"},
		{"backlog of the service full", []testkit.Option{testkit.WithoutStart(), testkit.WithLimits(push.Limits{BacklogTotal: 1, SyncWait: time.Millisecond})},
			func(s setup) {
				if r := s.h.Call(s.t, "POST", "/openapi/v1/push/private", s.f.Key, s.body); r.Status != 202 {
					s.t.Fatalf("first send: %d %s", r.Status, r.Body)
				}
			}, 429, "backlog_full"},
		{"draining", nil, func(s setup) { s.h.Engine.Drain() }, 503, "draining"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testkit.New(t, tt.opts...)
			f := h.Seed(t)
			s := setup{t, h, f, map[string]any{"botId": f.Bot.ID, "target": strconv.FormatInt(f.Target.ID, 10), "content": "x"}}
			tt.prime(s)
			r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, s.body)
			var e errAnswer
			r.Decode(t, &e)
			if r.Status != tt.status || e.Error != tt.reason {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, tt.status, tt.reason)
			}
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
			}
			// The key was admitted, so the answer reports its rate limit.
			limit, _ := strconv.Atoi(r.Header.Get("RateLimit-Limit"))
			remaining, errR := strconv.Atoi(r.Header.Get("RateLimit-Remaining"))
			reset, errS := strconv.Atoi(r.Header.Get("RateLimit-Reset"))
			if limit < 1 || errR != nil || errS != nil || remaining < 0 || reset < 1 {
				t.Fatalf("RateLimit headers: %v", r.Header)
			}
			if tt.reason == "rate_limited" && (limit != 2 || remaining != 0) {
				t.Fatalf("rate-limited answer: limit %d remaining %d", limit, remaining)
			}
		})
	}
}

// TestRateLimitHeadersCountDown checks RateLimit-Remaining on successive
// admitted requests of one key.
func TestRateLimitHeadersCountDown(t *testing.T) {
	h := testkit.New(t, withFrozenRateLimit(), testkit.WithLimits(push.Limits{RatePerMinute: 5}))
	f := h.Seed(t)
	for want := 4; want >= 0; want-- {
		r := h.Call(t, "GET", "/openapi/queue-request?key=k", f.Key, nil)
		if r.Status != 200 || r.Header.Get("RateLimit-Limit") != "5" || r.Header.Get("RateLimit-Remaining") != strconv.Itoa(want) {
			t.Fatalf("want %d remaining: %d %v", want, r.Status, r.Header)
		}
	}
	// Refused requests (401) carry no rate headers: no key was admitted.
	if r := h.Call(t, "GET", "/openapi/queue-request?key=k", "", nil); r.Status != 401 || r.Header.Get("RateLimit-Limit") != "" {
		t.Fatalf("no key: %d %v", r.Status, r.Header)
	}
}
