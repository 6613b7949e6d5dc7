package metrics_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/push"
)

// pick returns the series whose names start with one of the prefixes.
func pick(all map[string]float64, prefixes ...string) map[string]float64 {
	out := make(map[string]float64)
	for k, v := range all {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
			}
		}
	}
	return out
}

// onlyTelegram keeps the series of the telegram platform and those without
// a platform label, after checking that every other platform's series is
// zero: the run only sends through Telegram.
func onlyTelegram(t *testing.T, m map[string]float64) map[string]float64 {
	t.Helper()
	out := make(map[string]float64)
	for k, v := range m {
		if strings.Contains(k, `platform="`) && !strings.Contains(k, `platform="telegram"`) {
			if v != 0 {
				t.Errorf("%s = %v, want 0: nothing was sent on that platform", k, v)
			}
			continue
		}
		out[k] = v
	}
	return out
}

// TestMetricsAfterARunOfSends drives a run of sends through the HTTP API —
// successes, a failure, an uncertain one, a retried one, replays, a
// rate-limited request, a cancel with refund — and checks every number.
func TestMetricsAfterARunOfSends(t *testing.T) {
	h := testkit.New(t, testkit.WithWorkers(1),
		testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{RatePerMinute: 20}))
	f := h.Seed(t)
	t2 := h.Target(t, f.Bot.ID, push.TargetGroup, "")
	one := func(content string) map[string]any {
		return map[string]any{"botId": f.Bot.ID, "target": strconv.FormatInt(f.Target.ID, 10), "content": content}
	}
	send := func(body map[string]any, want int, hdr ...string) testkit.Response {
		t.Helper()
		r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body, hdr...)
		if r.Status != want {
			t.Fatalf("send %v: %d %s, want %d", body, r.Status, r.Body, want)
		}
		return r
	}
	// Before anything: every series of the platforms exists at zero.
	start := h.Scrape(t)
	if v, ok := start[`herald_jobs_settled_total{platform="telegram",state="expired"}`]; !ok || v != 0 {
		t.Fatalf("no zero series for telegram before its first job: %v", pick(start, "herald_jobs"))
	}

	send(one("s1"), 200, "Idempotency-Key", "s1")
	send(one("s2"), 200)
	if r := send(one("s1"), 200, "Idempotency-Key", "s1"); r.Header.Get("Idempotency-Replay") != "true" {
		t.Fatal("no replay")
	}
	batch := map[string]any{"bot_id": f.Bot.ID, "target_ids": []int64{f.Target.ID, t2.ID}, "content": "b"}
	for range 2 {
		if r := h.Call(t, "POST", "/openapi/batch-send", f.Key, batch, "Idempotency-Key", "b1"); r.Status != 200 {
			t.Fatalf("batch: %d %s", r.Status, r.Body)
		}
	}
	multi := map[string]any{"bots": []any{map[string]any{"botId": f.Bot.ID, "targets": []string{strconv.FormatInt(t2.ID, 10)}}}, "content": "m"}
	for range 2 {
		if r := h.Call(t, "POST", "/openapi/v1/push/batch", f.Key, multi, "Idempotency-Key", "m1"); r.Status != 200 {
			t.Fatalf("multi: %d %s", r.Status, r.Body)
		}
	}
	h.Telegram.Fail(fake.TelegramFault{Status: 400, Description: "Bad Request: chat not found"})
	send(one("fails"), 500)
	h.Telegram.DropNext(1)
	send(one("lost"), 202)
	h.Telegram.Fail(fake.TelegramFault{Status: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1})
	send(one("retried"), 200)

	// A is sending (blocked at the platform); B waits behind it in the
	// queue of the one worker; B is canceled.
	for drained := false; !drained; { // forget the arrivals of the sends above
		select {
		case <-h.Telegram.Arrived():
		default:
			drained = true
		}
	}
	h.Telegram.Block()
	var wg sync.WaitGroup
	answers := make([]int, 2)
	for i, c := range []string{"A", "B"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = h.Call(t, "POST", "/openapi/v1/push/private", f.Key, one(c)).Status
		}()
		if i == 0 {
			<-h.Telegram.Arrived()
		}
	}
	var queued []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		running, err1 := h.Store.FindJobs(context.Background(), push.StateRunning, time.Time{}, 0)
		waiting, err2 := h.Store.FindJobs(context.Background(), push.StateQueued, time.Time{}, 0)
		if err1 != nil || err2 != nil || time.Now().After(deadline) {
			t.Fatalf("A running and B queued never seen: %v %v (running %v, queued %v)", err1, err2, running, waiting)
		}
		if len(running) == 1 && len(waiting) == 1 {
			queued = waiting
			break
		}
	}
	during := h.Scrape(t)
	if c := h.Call(t, "POST", "/openapi/queue/"+queued[0]+"/cancel", f.Key, nil); c.Status != 200 {
		t.Fatalf("cancel: %d %s", c.Status, c.Body)
	}
	afterCancel := h.Scrape(t)
	h.Telegram.Unblock()
	wg.Wait()
	if diff := cmp.Diff([]int{200, 200}, answers); diff != "" {
		t.Fatalf("A and B answered (-want +got):\n%s", diff)
	}

	// 20 requests of a second key pass, the 21st is refused.
	key2 := h.Key(t, f.Account.ID)
	for i := 1; i <= 21; i++ {
		want := 200
		if i == 21 {
			want = 429
		}
		if r := h.Call(t, "GET", "/openapi/queue-request?key=k", key2, nil); r.Status != want {
			t.Fatalf("request %d of key 2: %d", i, r.Status)
		}
	}
	h.CallRoot(t, "GET", "/nowhere/"+queued[0]) // an unmatched path is counted without its raw path

	end := h.Scrape(t)
	backlog := func(m map[string]float64) map[string]float64 {
		return pick(m, "herald_backlog", "herald_platform_backlog")
	}
	for _, c := range []struct {
		name string
		got  map[string]float64
		want float64
	}{{"while A sends and B waits", during, 2}, {"after B was canceled", afterCancel, 1}, {"at the end", end, 0}} {
		want := map[string]float64{"herald_backlog_jobs": c.want, `herald_platform_backlog_jobs{platform="telegram"}`: c.want}
		if diff := cmp.Diff(want, onlyTelegram(t, backlog(c.got))); diff != "" {
			t.Errorf("backlog %s (-want +got):\n%s", c.name, diff)
		}
	}
	// 2 singles + 2 batch targets + 1 multi target + fails + lost + retried + A + B.
	wantPoints := map[string]float64{"herald_points_charged_total": 10, "herald_points_refunded_total": 1}
	if diff := cmp.Diff(wantPoints, pick(end, "herald_points")); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
	if got := h.Balance(t, f.Account.ID); got != 100-10+1 {
		t.Errorf("balance %d, want 91", got)
	}
	jobs := func(state string, n float64) (string, float64) {
		return fmt.Sprintf(`herald_jobs_settled_total{platform="telegram",state="%s"}`, state), n
	}
	wantJobs := map[string]float64{}
	for _, kv := range [][2]any{{"succeeded", 7.0}, {"failed", 1.0}, {"uncertain", 1.0}, {"canceled", 1.0}, {"expired", 0.0}} {
		k, v := jobs(kv[0].(string), kv[1].(float64))
		wantJobs[k] = v
	}
	if diff := cmp.Diff(wantJobs, onlyTelegram(t, pick(end, "herald_jobs_settled_total"))); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	wantReplays := map[string]float64{`herald_idempotent_replays_total{kind="single"}`: 1, `herald_idempotent_replays_total{kind="batch"}`: 1, `herald_idempotent_replays_total{kind="multi"}`: 1}
	if diff := cmp.Diff(wantReplays, pick(end, "herald_idempotent_replays_total")); diff != "" {
		t.Errorf("replays (-want +got):\n%s", diff)
	}
	if got := end["herald_rate_limited_total"]; got != 1 {
		t.Errorf("rate-limited %v, want 1", got)
	}
	// One platform call per attempt: 7 delivered, the refusal, the lost
	// one, and the 429 before its retry.
	wantCalls := map[string]float64{
		`herald_platform_call_duration_seconds_count{outcome="ok",platform="telegram"}`:         7,
		`herald_platform_call_duration_seconds_count{outcome="definitive",platform="telegram"}`: 1,
		`herald_platform_call_duration_seconds_count{outcome="uncertain",platform="telegram"}`:  1,
		`herald_platform_call_duration_seconds_count{outcome="retryable",platform="telegram"}`:  1,
	}
	if diff := cmp.Diff(wantCalls, pick(end, "herald_platform_call_duration_seconds_count")); diff != "" {
		t.Errorf("platform calls (-want +got):\n%s", diff)
	}
	// Requests by route pattern and status (this last scrape is counted
	// after it is answered: three scrapes before it).
	wantRequests := map[string]float64{
		`herald_http_requests_total{method="POST",route="/api/openapi/v1/push/private",status="200"}`:  6,
		`herald_http_requests_total{method="POST",route="/api/openapi/v1/push/private",status="202"}`:  1,
		`herald_http_requests_total{method="POST",route="/api/openapi/v1/push/private",status="500"}`:  1,
		`herald_http_requests_total{method="POST",route="/api/openapi/batch-send",status="200"}`:       2,
		`herald_http_requests_total{method="POST",route="/api/openapi/v1/push/batch",status="200"}`:    2,
		`herald_http_requests_total{method="POST",route="/api/openapi/queue/:id/cancel",status="200"}`: 1,
		`herald_http_requests_total{method="GET",route="/api/openapi/queue-request",status="200"}`:     20,
		`herald_http_requests_total{method="GET",route="/api/openapi/queue-request",status="429"}`:     1,
		`herald_http_requests_total{method="GET",route="/metrics",status="200"}`:                       3,
		`herald_http_requests_total{method="GET",route="unmatched",status="404"}`:                      1,
	}
	if diff := cmp.Diff(wantRequests, pick(end, "herald_http_requests_total")); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(latencyCounts(wantRequests), pick(end, "herald_http_request_duration_seconds_count")); diff != "" {
		t.Errorf("request latencies observed (-want +got):\n%s", diff)
	}
	// Bounded labels: no job id, target, key or account in any series.
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-`)
	for k := range end {
		if uuid.MatchString(k) || strings.Contains(k, "hrd_") || strings.Contains(k, f.Target.Address) {
			t.Errorf("series %s carries an unbounded label value", k)
		}
	}
}

// latencyCounts turns the expected request counts into the expected
// counts of the latency histogram, which has the same series without the
// status label.
func latencyCounts(requests map[string]float64) map[string]float64 {
	out := make(map[string]float64)
	for k, v := range requests {
		labels := k[strings.IndexByte(k, '{')+1 : strings.Index(k, ",status=")] // method="…",route="…"
		out["herald_http_request_duration_seconds_count{"+labels+"}"] += v
	}
	return out
}

// TestBuildInfo: the running build is a series of its own, 1 with its
// version in the labels, and absent when no version was given.
func TestBuildInfo(t *testing.T) {
	tests := []struct {
		name  string
		build metrics.Build
		want  string
	}{
		{"a release", metrics.Build{Version: "v1.2.0", Revision: "4f4d0b1c2d3e", GoVersion: "go1.26.0"},
			`herald_build_info{goversion="go1.26.0",revision="4f4d0b1c2d3e",version="v1.2.0"} 1`},
		{"no version given", metrics.Build{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New(metrics.Options{NoRuntime: true, Build: tt.build})
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			var got string
			for _, line := range strings.Split(rec.Body.String(), "\n") {
				if strings.HasPrefix(line, "herald_build_info{") {
					got = line
				}
			}
			if got != tt.want {
				t.Fatalf("herald_build_info: %q, want %q\n%s", got, tt.want, rec.Body.String())
			}
		})
	}
}
