package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
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
// succeeded (none uncertain) and each message arrived once. A send the
// API refuses with 503 during the outage (nothing written) is made again.
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
		select {
		case <-c.tg.Arrived():
		case <-time.After(30 * time.Second):
			t.Fatal("the sends did not reach the platform")
		}
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

// TestScaleOutRedisDownReadyzAndLogs: herald serve with --redis checks
// Redis in /readyz (ready while it answers, 503 naming it while it is
// away, ready again when it is back); and a node whose Redis refuses
// connections logs the complaints of go-redis and asynq as records of its
// JSON log, never as plain lines inside it.
func TestScaleOutRedisDownReadyzAndLogs(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	proxy := testkit.NewProxy(t, testkit.HostPort(t, testkit.RedisURL(t)))
	c := newScaleOut(t, pg, pg, testkit.WithHost(t, testkit.RedisURL(t), proxy.Addr()))
	a := testkit.StartServe(t, heraldBin, c.env, "--log-format", "json")
	ready := func(p *testkit.Process) (int, map[string]any) {
		r := p.CallRoot(t, "GET", "/readyz")
		checks, _ := r.JSON()["checks"].(map[string]any)
		return r.Status, checks
	}
	if status, checks := ready(a); status != http.StatusOK || checks["redis"] != "ok" || checks["database"] != "ok" {
		t.Fatalf("/readyz with Redis up: %d %v; want 200 with database and redis ok", status, checks)
	}
	proxy.Cut()
	if status, checks := ready(a); status != http.StatusServiceUnavailable || checks["redis"] != "failing" || checks["database"] != "ok" {
		t.Fatalf("/readyz with Redis down: %d %v; want 503 naming redis as failing", status, checks)
	}
	proxy.Restore()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if status, _ := ready(a); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not answer 200 once Redis was back")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A node whose Redis port is closed: go-redis fails its dials, asynq
	// its polls.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	b := testkit.StartServe(t, heraldBin, slices.Concat(c.env, []string{"HERALD_REDIS=redis://" + closed + "/0"}), "--log-format", "json")
	if status, checks := ready(b); status != http.StatusServiceUnavailable || checks["redis"] != "failing" {
		t.Fatalf("/readyz with Redis refusing connections: %d %v; want 503 naming redis as failing", status, checks)
	}
	sawRedis, sawAsynq := false, false
	for deadline := time.Now().Add(15 * time.Second); !(sawRedis && sawAsynq) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		sawRedis, sawAsynq = false, false
		for _, line := range testkit.Lines(b.Output()) {
			if strings.HasPrefix(line, "herald listening on ") { // stdout: where it listens
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["level"] == nil || m["msg"] == nil {
				t.Fatalf("a line of the JSON log is not a JSON record: %q", line)
			}
			msg, _ := m["msg"].(string)
			sawRedis = sawRedis || strings.HasPrefix(msg, "redis: ")
			sawAsynq = sawAsynq || strings.HasPrefix(msg, "asynq: ")
		}
	}
	if !sawRedis || !sawAsynq {
		t.Errorf("with Redis refusing connections, the log has go-redis records %v and asynq records %v; want both", sawRedis, sawAsynq)
	}
}
