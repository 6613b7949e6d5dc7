package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/bench"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// runBench runs herald bench with args and --json and decodes its report.
func runBench(t *testing.T, args ...string) bench.Report {
	t.Helper()
	return runBenchEnv(t, nil, args...)
}

// runBenchEnv is runBench with env added to the environment.
func runBenchEnv(t *testing.T, env []string, args ...string) bench.Report {
	t.Helper()
	cmd := exec.Command(heraldBin, append([]string{"bench", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("herald bench %v: %v\n%s", args, err, out)
	}
	var r bench.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("herald bench %v printed no JSON report: %v\n%s", args, err, out)
	}
	return r
}

// TestBenchScenarios is a smoke test of herald bench: every scenario runs
// for a moment against an embedded server, every answer is the scenario's
// good one, and the report holds the server's own figures. The numbers
// themselves are not judged here (BENCHMARKS.md is for that).
func TestBenchScenarios(t *testing.T) {
	const concurrency = 4
	for _, sc := range bench.Scenarios() {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			r := runBench(t, "--scenario", sc, "--duration", "2s", "--warmup", "0", "--concurrency", fmt.Sprint(concurrency), "--batch-size", "5")
			if r.Scenario != sc || r.Server != "sqlite" {
				t.Fatalf("report of %s on %s", r.Scenario, r.Server)
			}
			if r.OK == 0 || r.NotOK != 0 {
				t.Fatalf("%d good answers and %d others (%v; first: %s)\n%s", r.OK, r.NotOK, r.Statuses, r.FirstProblem, r.ServerLogTail)
			}
			perRequest := map[string]int64{bench.Batch: 5, bench.Multi: 5, bench.Replay: 0}
			want, ok := perRequest[sc]
			if !ok {
				want = 1
			}
			switch {
			case sc == bench.Accept:
				// Answered 202 before the slow platform took them.
			case want == 0 && r.Deliveries != 0:
				t.Errorf("%d deliveries while only replays were sent: a replay sent again", r.Deliveries)
			case want > 0 && r.Deliveries < (r.OK-concurrency)*want:
				// The requests in flight when the measured time began (at
				// most one per worker) are counted as answered in it, but
				// some of their deliveries happened before it.
				t.Errorf("%d deliveries for %d answered requests of %d targets", r.Deliveries, r.OK, want)
			}
			f := r.ServerFigures
			if f == nil || f.CPUSeconds <= 0 || f.AllocsPerRequest <= 0 || f.PeakRSSMiB <= 0 || r.Latency.P50 <= 0 || r.Latency.Max < r.Latency.P99 {
				t.Errorf("incomplete report: %+v, server %+v", r, f)
			}
		})
	}
}

// TestBenchAgainstURL: herald bench addresses a running server with --url
// and a key, bot and targets of its own.
func TestBenchAgainstURL(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{RatePerMinute: -1}))
	f := h.Seed(t)
	r := runBench(t, "--url", h.URL, "--key", f.Key, "--bot", fmt.Sprint(f.Bot.ID), "--targets", fmt.Sprint(f.Target.ID),
		"--duration", "1s", "--warmup", "0", "--concurrency", "2")
	if r.Server != "url" || r.OK == 0 || r.NotOK != 0 || r.ServerFigures != nil {
		t.Fatalf("report: %+v", r)
	}
	if got := int64(len(h.Telegram.Messages())); got < r.OK {
		t.Fatalf("the platform received %d messages; the bench counted %d delivered sends", got, r.OK)
	}
}

// TestBenchScaleOut: herald bench runs its embedded server on PostgreSQL
// and Redis, seeding sealed bot credentials that the server opens with the
// run's own secret key: as one node, as two serve nodes sharing the load,
// and as API nodes with worker nodes that send. Without the scale-out mode
// more than one node is refused.
func TestBenchScaleOut(t *testing.T) {
	db, rdb := testkit.PostgresURL(t), testkit.RedisURL(t)
	for _, tt := range []struct {
		name               string
		args               []string
		nodes, workerNodes int
	}{
		{"one node", nil, 1, 0},
		{"two nodes", []string{"--nodes", "2"}, 2, 0},
		{"API nodes and worker nodes", []string{"--nodes", "2", "--worker-nodes", "2"}, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runBench(t, append([]string{"--db", db, "--redis", rdb, "--duration", "2s", "--warmup", "0", "--concurrency", "4"}, tt.args...)...)
			if r.Server != "postgres+redis" || r.OK == 0 || r.NotOK != 0 {
				t.Fatalf("report: %+v (first problem: %s)\n%s", r, r.FirstProblem, r.ServerLogTail)
			}
			if r.Nodes != tt.nodes || r.WorkerNodes != tt.workerNodes {
				t.Errorf("report of %d nodes and %d worker nodes, want %d and %d", r.Nodes, r.WorkerNodes, tt.nodes, tt.workerNodes)
			}
			if r.Deliveries < r.OK-4 { // see TestBenchScenarios
				t.Errorf("%d deliveries for %d answered single sends", r.Deliveries, r.OK)
			}
			// Herald's own counts are every node's, worker nodes' too
			// (their --ops-addr /metrics): a node left out makes them
			// absent.
			if c := r.Costs; c == nil || c.HeraldCommits == nil || c.HeraldStatements == nil || c.HeraldRedisCommands == nil || *c.HeraldCommits <= 0 {
				t.Errorf("Herald's own counts of its calls are missing: %+v", c)
			}
		})
	}
	for _, args := range [][]string{{"--nodes", "2"}, {"--worker-nodes", "1"}} {
		out, err := exec.Command(heraldBin, append([]string{"bench", "--duration", "1s"}, args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--redis") {
			t.Errorf("herald bench %s without the scale-out mode: %v\n%s", args, err, out)
		}
	}
}

// TestBenchIgnoresServeEnvironment: a shell set up for herald serve does
// not steer herald bench. Its flags have no environment twins and its
// embedded server does not inherit serve's, so HERALD_DB and HERALD_REDIS
// leave that database and that Redis alone. The secret keys of the
// environment still apply, to the seeding and the server alike.
func TestBenchIgnoresServeEnvironment(t *testing.T) {
	prod := filepath.Join(t.TempDir(), "prod.db")
	const content = "serve's database"
	if err := os.WriteFile(prod, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	serveEnv := []string{"HERALD_DB=" + prod, "HERALD_REDIS=redis://127.0.0.1:1/0", "HERALD_SYNC_WAIT=1ns",
		"HERALD_SECRET_KEY=" + base64.StdEncoding.EncodeToString(key)}
	r := runBenchEnv(t, serveEnv, "--duration", "1s", "--warmup", "0", "--concurrency", "2")
	if r.Server != "sqlite" || r.OK == 0 || r.NotOK != 0 {
		t.Fatalf("report: %+v (first problem: %s)\n%s", r, r.FirstProblem, r.ServerLogTail)
	}
	if data, err := os.ReadFile(prod); err != nil || string(data) != content {
		t.Fatalf("HERALD_DB's file now holds %q (%v)", data, err)
	}

	cmd := exec.Command(heraldBin, "bench", "--duration", "1s", "--warmup", "0")
	cmd.Env = append(os.Environ(), "HERALD_SECRET_KEY=not a key")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "HERALD_SECRET_KEY") {
		t.Fatalf("herald bench with a bad HERALD_SECRET_KEY: %v\n%s", err, out)
	}
}

// TestBenchCosts checks the cost counters of herald bench against sends
// of known cost, on a PostgreSQL and a Redis of the test's own (the
// counters are the servers', which other clients would move):
//   - the probe line makes one INSERT, its own transaction, and one LPUSH
//     per request, and is reported so;
//   - at concurrency 1 no two transactions share a commit, and a single
//     send is the three transactions of BENCHMARKS.md: the request's
//     (BEGIN, the idempotency record and the job in one statement, the
//     service's and the bot's backlog counters, COMMIT), the worker's
//     claim (BEGIN, the move to running, COMMIT) and its outcome (BEGIN,
//     the move to succeeded, the two backlog counters, COMMIT): 3 commits
//     and 13 statements. The node that accepts it runs it (a local run,
//     queue/local.go): its Redis calls are the job's reservation with
//     the safety task and, after the send, their deletion (two script
//     calls), and the worker's polls of an empty queue between
//     sends; the completion notice is not published while no other node
//     listens.
func TestBenchCosts(t *testing.T) {
	pg := testkit.StartPostgresServer(t)
	rdb := testkit.StartRedisServer(t)
	r := runBench(t, "--db", pg.URL(), "--redis", rdb, "--duration", "3s", "--warmup", "1s", "--concurrency", "1", "--probe")
	if r.OK < 100 || r.NotOK != 0 || r.Probe == nil || r.Probe.OK < 100 || r.Probe.NotOK != 0 {
		t.Fatalf("report: %+v, probe %+v (first problem: %s)\n%s", r, r.Probe, r.FirstProblem, r.ServerLogTail)
	}
	within := func(what string, v *float64, lo, hi float64) {
		t.Helper()
		if v == nil {
			t.Errorf("%s: not reported", what)
		} else if *v < lo || *v > hi {
			t.Errorf("%s: %.2f per request, want %.2f to %.2f", what, *v, lo, hi)
		}
	}
	p, c := r.Probe.Costs, r.Costs
	if p == nil || c == nil {
		t.Fatalf("no costs reported: %+v / %+v", r, r.Probe)
	}
	pj, _ := json.Marshal(p)
	cj, _ := json.Marshal(c)
	t.Logf("probe %s\nsend %s", pj, cj)
	// PostgreSQL publishes its transaction counts up to a second late: a
	// wide band for them; Redis's and Herald's own counts are exact but
	// for the requests in flight at the edges of the measured time.
	within("probe: PostgreSQL transactions", p.PGTransactions, 0.6, 1.4)
	within("probe: Redis commands", p.RedisCommands, 0.97, 1.05)
	within("probe: Redis script calls", p.RedisScriptCalls, 0, 0)
	// A lone send is two commits, its request's (which claims its job: a
	// worker of the node is free) and its outcome's, each BEGIN, the
	// batch's end in one pipeline and COMMIT. The engine's background work
	// (queue-wait expiry every second, the sweep, the reconciler) adds a
	// few statements a second, spread over the requests: more per request
	// on a slow, loaded machine.
	within("send: commits", c.HeraldCommits, 1.95, 2.3)
	within("send: statements", c.HeraldStatements, 9.5, 11)
	within("send: PostgreSQL transactions", c.PGTransactions, 2*0.6, 2*1.7)
	// The reservation with the safety task, and their deletion: one
	// script call each (TestRedisQueueLocalRunRoundTrips counts them
	// exactly); and the polls (one script call each) of an idle worker
	// pool, about 100 a second.
	within("send: Redis round trips", c.HeraldRedisRoundTrips, 2, 4)
	within("send: Redis commands sent", c.HeraldRedisCommands, 2, 4)
	within("send: Redis script calls", c.RedisScriptCalls, 2, 4)
	for what, v := range map[string]*float64{"Herald CPU": c.HeraldCPUUs, "PostgreSQL CPU": c.PostgresCPUUs, "Redis CPU": c.RedisCPUUs, "probe PostgreSQL CPU": p.PostgresCPUUs} {
		within(what+" (µs)", v, 1, 1e6)
	}
}

// TestBenchNodesAddThroughput: nodes add throughput. Each node sends with
// 8 workers to a platform that takes 100 ms, so one node carries at most
// 80 sends a second; offered 120 a second (open loop), one node falls
// behind and two carry it, sharing one PostgreSQL and one Redis. (The
// bound is the nodes' workers, not the machine: BENCHMARKS.md has the
// CPU-bound figures.)
func TestBenchNodesAddThroughput(t *testing.T) {
	db, rdb := testkit.PostgresURL(t), testkit.RedisURL(t)
	const offered = 120.0
	run := func(nodes int) bench.Report {
		r := runBench(t, "--db", db, "--redis", rdb, "--nodes", strconv.Itoa(nodes), "--workers", "8",
			"--platform-latency", "100ms", "--rate", strconv.Itoa(int(offered)), "--concurrency", "60",
			"--duration", "3s", "--warmup", "1s")
		if r.NotOK != 0 {
			t.Fatalf("%d nodes: %d answers not ok (first problem: %s)\n%s", nodes, r.NotOK, r.FirstProblem, r.ServerLogTail)
		}
		t.Logf("%d nodes: %.0f deliveries/s of %.0f offered, p50 %.0f ms", nodes, r.DeliveriesPerSec, offered, r.Latency.P50)
		return r
	}
	if one := run(1); one.DeliveriesPerSec > 0.75*offered {
		t.Errorf("one node delivered %.0f/s, above what its 8 workers can (80/s): the bound of the test does not hold", one.DeliveriesPerSec)
	}
	if two := run(2); two.DeliveriesPerSec < 0.85*offered {
		t.Errorf("two nodes delivered %.0f/s of the %.0f/s offered: the second node did not add its workers", two.DeliveriesPerSec, offered)
	}
}
