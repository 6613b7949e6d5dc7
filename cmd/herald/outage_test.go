package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestScaleOutPostgresStoppedDuringSends: PostgreSQL stops for 3 s while
// 100 sends are being delivered. A worker that knew the platform's answer
// keeps trying to record it until the database is back, so every job ends
// succeeded (none uncertain) and each message arrived once. Sends made
// during the outage are refused with 503 and made again.
func TestScaleOutPostgresStoppedDuringSends(t *testing.T) {
	t.Parallel()
	pg := testkit.StartPostgresServer(t) // private: this test stops it
	c := newScaleOut(t, pg.URL(), pg.URL(), testkit.RedisURL(t), "HERALD_PACING=false", "HERALD_RATE_LIMIT=0")
	a := testkit.StartServe(t, heraldBin, c.env, "--sync-wait", "50ms", "--workers", "8")
	c.tg.SetDelay(300 * time.Millisecond)

	const sends = 100
	var (
		mu      sync.Mutex
		jobs    = map[string]string{} // job id → text
		refused atomic.Int64
		wg      sync.WaitGroup
	)
	for g := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range sends / 10 {
				text := fmt.Sprintf("m%d-%d", g, i)
				for deadline := time.Now().Add(60 * time.Second); ; {
					r := c.sendVia(t, a.URL, c.key, text, text)
					if r.Status == http.StatusOK || r.Status == http.StatusAccepted {
						mu.Lock()
						jobs[data(r)["jobId"].(string)] = text
						mu.Unlock()
						break
					}
					if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
						t.Errorf("send %s: %d %s", text, r.Status, r.Body)
						return
					}
					refused.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	// Stop the database while sends are at the platform.
	for range 15 {
		<-c.tg.Arrived()
	}
	pg.Stop()
	stopped := time.Now()
	time.Sleep(3 * time.Second)
	pg.Start()
	t.Logf("PostgreSQL was down for %s", time.Since(stopped).Round(time.Millisecond))
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if len(jobs) != sends {
		t.Fatalf("%d jobs accepted, want %d", len(jobs), sends)
	}
	t.Logf("%d sends refused with 503 during the outage and made again", refused.Load())

	states := map[push.State]int{}
	deadline := time.Now().Add(2 * time.Minute)
	for id, text := range jobs {
		var j push.Job
		for {
			var err error
			j, err = c.store.Job(context.Background(), id)
			if err == nil && j.State.Settled() || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		states[j.State]++
		if j.State != push.StateSucceeded {
			t.Errorf("job %s (%s) is %s: %s", id, text, j.State, j.Error)
		}
	}
	t.Logf("job states: %v", states)
	got := texts(c.tg)
	for _, text := range jobs {
		if got[text] != 1 {
			t.Errorf("the platform received %q %d times, want once", text, got[text])
		}
	}
	if t.Failed() {
		t.Logf("server output:\n%s", a.Output())
	}
}
