package transport_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestResolveUncertainJob: a job resolved through the management API
// drops its "check it, then resolve" error, shows who resolved it, when,
// and the note in the job query, and is counted once among settled jobs
// (as uncertain), its resolution in jobs_resolved_total.
func TestResolveUncertainJob(t *testing.T) {
	for _, outcome := range []push.State{push.StateSucceeded, push.StateFailed} {
		t.Run(string(outcome), func(t *testing.T) {
			h := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 2 * time.Second}))
			f := h.Seed(t)
			h.Telegram.DropNext(1)
			r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "lost answer"})
			var sent singleAnswer
			r.Decode(t, &sent)
			if !sent.Data.Uncertain || !strings.Contains(sent.Data.Error, "check it, then resolve") {
				t.Fatalf("dropped send: %d %s", r.Status, r.Body)
			}
			id := sent.Data.JobID
			before := time.Now().UTC().Truncate(time.Millisecond)

			r = h.Call(t, "POST", "/manage/v1/jobs/"+id+"/resolve", f.Key, map[string]any{"outcome": string(outcome), "note": "seen in the chat"})
			if r.Status != http.StatusOK {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			q := h.Call(t, "GET", "/openapi/queue/"+id, f.Key, nil)
			var job struct {
				Data map[string]any `json:"data"`
			}
			q.Decode(t, &job)
			d := job.Data
			if d["status"] != string(outcome) || d["uncertain"] != false {
				t.Fatalf("resolved job: %s", q.Body)
			}
			errText, _ := d["error"].(string)
			if strings.Contains(errText, "check it") || outcome == push.StateSucceeded && errText != "" || outcome == push.StateFailed && !strings.Contains(errText, "resolved as failed by ") {
				t.Errorf("resolved job's error %q: want none for succeeded, who resolved it for failed, never the stale instruction", errText)
			}
			by, _ := d["resolvedBy"].(string)
			at, err := time.Parse(time.RFC3339Nano, func() string { s, _ := d["resolvedAt"].(string); return s }())
			if by == "" || err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) || d["note"] != "seen in the chat" {
				t.Errorf("resolved job: resolvedBy %q, resolvedAt %v (%v), note %v; want who, when and the note", by, d["resolvedAt"], err, d["note"])
			}

			got := h.Scrape(t)
			want := map[string]float64{
				`herald_jobs_settled_total{platform="telegram",state="uncertain"}`:                1,
				`herald_jobs_settled_total{platform="telegram",state="succeeded"}`:                0,
				`herald_jobs_settled_total{platform="telegram",state="failed"}`:                   0,
				`herald_jobs_resolved_total{platform="telegram",state="` + string(outcome) + `"}`: 1,
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}
