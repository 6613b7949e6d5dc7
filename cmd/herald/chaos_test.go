package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// chaosWorld is what the chaos test's clients saw.
type chaosWorld struct {
	mu       sync.Mutex
	named    map[string]bool     // every jobId any answer named
	byKey    map[string][]string // Idempotency-Key → the job ids of its first answer
	bodies   map[string]any      // Idempotency-Key → the body sent with it
	paths    map[string]string   // Idempotency-Key → the endpoint
	accounts map[string]string   // Idempotency-Key → the API key used
	pending  []string            // keys whose request got no answer yet
	jobs     []string            // job ids, for random cancels
	replays  atomic.Int64
	answers  map[int]int // HTTP status → count
	failures []string
}

func (w *chaosWorld) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures = append(w.failures, fmt.Sprintf(format, args...))
}

// chaosMode is an installation the chaos test runs against.
type chaosMode struct {
	name string
	// setup returns the environment of every herald process, the database
	// the test reads afterwards, and how many serve nodes to run.
	setup func(t *testing.T) (env []string, db string, nodes int)
}

// TestChaos runs a load of single and batch sends (with and without
// Idempotency-Keys), replays and random cancels against herald serve while
// the platform misbehaves at random and the processes are killed with
// SIGKILL and restarted several times; then it checks Herald's promises.
// It runs on the embedded installation (one process, SQLite, in-process
// queue) and on the scale-out one (two nodes on PostgreSQL and Redis).
func TestChaos(t *testing.T) {
	modes := []chaosMode{
		{"sqlite", func(t *testing.T) ([]string, string, int) {
			db := filepath.Join(t.TempDir(), "chaos.db")
			return []string{"HERALD_DB=" + db}, db, 1
		}},
		{"postgres+redis", func(t *testing.T) ([]string, string, int) {
			db := testkit.PostgresURL(t)
			env := []string{"HERALD_DB=" + db, "HERALD_REDIS=" + testkit.RedisURL(t),
				"HERALD_REDIS_NAMESPACE=" + testkit.RandomName("chaos_"),
				"HERALD_SECRET_KEY=" + storage.EncodeSecretKey(storage.NewSecretKey()),
				"HERALD_RECONCILE_INTERVAL=2s"}
			return env, db, 2
		}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			runChaos(t, m)
		})
	}
}

func runChaos(t *testing.T, mode chaosMode) {
	load := 25 * time.Second
	if d, err := time.ParseDuration(os.Getenv("HERALD_CHAOS_DURATION")); err == nil {
		load = d
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("HERALD_CHAOS_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("chaos seed %d (HERALD_CHAOS_SEED to replay), load %s", seed, load)
	rnd := rand.New(rand.NewPCG(seed, 1))

	env, db, nodes := mode.setup(t)
	tg := fake.NewTelegram(t)
	tg.SetChaos(fake.Chaos{Seed: seed, Slow: 0.2, MaxDelay: 400 * time.Millisecond, Fail5xx: 0.04, Fail4xx: 0.04, RateLimit: 0.05, Drop: 0.04})

	type acct struct {
		id, key, bot string
		targets      []int64
	}
	var accounts []acct
	for i, balance := range []string{"5000", "5000", "40"} {
		a := testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", fmt.Sprint("a", i))
		id := fmt.Sprint(a["id"])
		testkit.MustAdmin(t, heraldBin, env, "points", "set", "--account", id, "--balance", balance)
		k := testkit.MustAdmin(t, heraldBin, env, "key", "create", "--account", id)
		cfg := `{"token":"` + tg.NewBot() + `","api_base":"` + tg.URL() + `"}`
		b := testkit.MustAdmin(t, heraldBin, env, "bot", "create", "--account", id, "--platform", "telegram", "--name", "b", "--config", cfg)
		ac := acct{id: id, key: k["key"].(string), bot: fmt.Sprint(b["id"])}
		for j := 0; j < 4; j++ {
			chat := fmt.Sprint(1000*(i+1) + j)
			tg.AddChat(chat)
			tr := testkit.MustAdmin(t, heraldBin, env, "target", "bind", "--bot", ac.bot, "--type", "user", "--address", chat)
			ac.targets = append(ac.targets, int64(tr["id"].(float64)))
		}
		accounts = append(accounts, ac)
	}

	serveArgs := []string{"--points", "--sync-wait", "300ms", "--workers", "4", "--rate-limit", "0", "--drain-timeout", "1s", "--log-level", "warn"}
	// urls[i] is the API of node i; a killed node's slot points at the
	// other node until it is back.
	urls := make([]atomic.Pointer[string], nodes)
	procs := make([]*testkit.Process, nodes)
	start := func(i int) {
		procs[i] = testkit.StartServe(t, heraldBin, env, serveArgs...)
		u := procs[i].URL
		urls[i].Store(&u)
	}
	for i := range procs {
		start(i)
	}
	pickURL := func(r *rand.Rand) string { return *urls[r.IntN(nodes)].Load() }

	w := &chaosWorld{named: map[string]bool{}, byKey: map[string][]string{}, bodies: map[string]any{},
		paths: map[string]string{}, accounts: map[string]string{}, answers: map[int]int{}}
	client := &http.Client{Timeout: 5 * time.Second}
	post := func(base, path, key, idem string, body any) (int, map[string]any, error) {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+key)
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, nil, err
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m, nil
	}
	// jobIDs extracts the job ids of a send answer, in order.
	jobIDs := func(m map[string]any) []string {
		data, _ := m["data"].(map[string]any)
		if id, ok := data["jobId"].(string); ok {
			return []string{id}
		}
		var ids []string
		results, _ := data["results"].([]any)
		for _, r := range results {
			if id, ok := r.(map[string]any)["jobId"].(string); ok {
				ids = append(ids, id)
			}
		}
		return ids
	}
	record := func(idem string, status int, m map[string]any) {
		ids := jobIDs(m)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.answers[status]++
		for _, id := range ids {
			w.named[id] = true
		}
		w.jobs = append(w.jobs, ids...)
		if idem == "" || len(ids) == 0 {
			return
		}
		if first, ok := w.byKey[idem]; ok {
			w.replays.Add(1)
			if fmt.Sprint(first) != fmt.Sprint(ids) {
				w.failures = append(w.failures, fmt.Sprintf("key %s answered %v, earlier %v", idem, ids, first))
			}
			return
		}
		w.byKey[idem] = ids
	}

	ctx, cancel := context.WithTimeout(context.Background(), load)
	defer cancel()
	var seq atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < 6; c++ {
		wg.Add(1)
		r := rand.New(rand.NewPCG(seed, uint64(c)+2))
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				a := accounts[r.IntN(len(accounts))]
				n := seq.Add(1)
				content := fmt.Sprintf("m%d", n)
				bot, _ := strconv.Atoi(a.bot)
				var path, idem string
				var body any
				switch x := r.Float64(); {
				case x < 0.10: // resend a key whose answer was lost, or replay one
					w.mu.Lock()
					if len(w.pending) > 0 {
						idem = w.pending[0]
						w.pending = w.pending[1:]
					} else {
						for k := range w.byKey {
							idem = k
							break
						}
					}
					if idem != "" {
						path, body, a.key = w.paths[idem], w.bodies[idem], w.accounts[idem]
					}
					w.mu.Unlock()
					if idem == "" {
						continue
					}
				case x < 0.18: // cancel a random job
					w.mu.Lock()
					var id string
					if len(w.jobs) > 0 {
						id = w.jobs[r.IntN(len(w.jobs))]
					}
					w.mu.Unlock()
					if id != "" {
						_, _, _ = post(pickURL(r), "/openapi/queue/"+id+"/cancel", a.key, "", nil)
					}
					continue
				case x < 0.35: // batch to every target of the bot
					path, body = "/openapi/batch-send", map[string]any{"bot_id": bot, "target_ids": a.targets, "content": content}
					if r.IntN(2) == 0 {
						idem = fmt.Sprintf("b%d", n)
					}
				default: // single
					target := a.targets[r.IntN(len(a.targets))]
					path, body = "/openapi/v1/push/private", map[string]any{"botId": bot, "target": strconv.FormatInt(target, 10), "content": content}
					if r.IntN(3) != 0 {
						idem = fmt.Sprintf("s%d", n)
					}
				}
				if idem != "" {
					w.mu.Lock()
					if _, ok := w.bodies[idem]; !ok {
						w.bodies[idem], w.paths[idem], w.accounts[idem] = body, path, a.key
					}
					w.mu.Unlock()
				}
				status, m, err := post(pickURL(r), path, a.key, idem, body)
				if err != nil || status == http.StatusServiceUnavailable {
					// No answer: the outcome is unknown. With a key, it is
					// resubmitted later with the same key and body.
					if idem != "" {
						w.mu.Lock()
						if _, answered := w.byKey[idem]; !answered {
							w.pending = append(w.pending, idem)
						}
						w.mu.Unlock()
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if status >= 500 && status != http.StatusInternalServerError {
					w.fail("%s answered %d: %v", path, status, m)
				}
				if status == http.StatusInternalServerError && m["error"] != "platform_failed" {
					w.fail("%s answered 500 %v", path, m)
				}
				record(idem, status, m)
			}
		}()
	}
	// The killer: SIGKILL a node and restart it every 2–5 s.
	kills := 0
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(2*time.Second + time.Duration(rnd.Int64N(int64(3*time.Second)))):
			i := rnd.IntN(nodes)
			if nodes > 1 {
				other := *urls[(i+1)%nodes].Load()
				urls[i].Store(&other)
			}
			procs[i].Kill()
			kills++
			time.Sleep(100 * time.Millisecond)
			start(i)
		}
	}
	wg.Wait()
	// Resubmit every key still without an answer, so each keyed request
	// ends with a known outcome.
	for _, idem := range w.pending {
		status, m, err := post(*urls[0].Load(), w.paths[idem], w.accounts[idem], idem, w.bodies[idem])
		if err != nil {
			t.Fatalf("resubmitting %s after the load: %v", idem, err)
		}
		record(idem, status, m)
	}
	t.Logf("%d kills; answers by status %v; %d job ids named; %d replays compared", kills, w.answers, len(w.named), w.replays.Load())
	if kills < 3 {
		t.Fatalf("only %d kills: the load was too short to test recovery", kills)
	}

	// Let the nodes finish every queued job, then stop them. On the
	// scale-out installation, a job whose worker was killed mid-send comes
	// back from the queue when the dead worker's lease has run out (about a
	// minute) and becomes uncertain then.
	store, err := storage.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	deadline := time.Now().Add(150 * time.Second)
	for {
		queued, _ := store.FindJobs(context.Background(), push.StateQueued, time.Time{}, 0)
		running, _ := store.FindJobs(context.Background(), push.StateRunning, time.Time{}, 0)
		if len(queued)+len(running) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still queued and %d running %s after the load", len(queued), len(running), 150*time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range procs {
		if err := p.Terminate(10 * time.Second); err != nil {
			t.Fatalf("serve did not stop cleanly: %v", err)
		}
	}
	checkChaosInvariants(t, store, tg, w, len(accounts))
}

func checkChaosInvariants(t *testing.T, store *storage.Store, tg *fake.Telegram, w *chaosWorld, accounts int) {
	t.Helper()
	ctx := context.Background()
	for _, f := range w.failures {
		t.Error(f)
	}
	// Every jobId that any answer named exists.
	for id := range w.named {
		if _, err := store.Job(ctx, id); err != nil {
			t.Errorf("job %s named in an answer: %v", id, err)
		}
	}
	// Every job is settled: terminal or uncertain.
	var rows []struct {
		ID        string
		AccountID int64
		TargetID  int64
		Content   string
		State     string
		Cost      int64
	}
	if err := store.DB().NewSelect().Table("jobs").Column("id", "account_id", "target_id", "content", "state", "cost").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	jobState := map[string]string{}
	for _, r := range rows {
		states[r.State]++
		jobState[r.ID] = r.State
		if !push.State(r.State).Settled() {
			t.Errorf("job %s is %s after recovery", r.ID, r.State)
		}
	}
	t.Logf("%d jobs by state: %v", len(rows), states)
	// The platform saw each job at most once as a request that could have
	// delivered it (accepted, dropped after reading, or a 502).
	delivering := map[[2]string]int{}
	accepted := map[[2]string]bool{}
	for _, r := range tg.Log() {
		switch r.Outcome {
		case "answered", "dropped", "502":
			delivering[[2]string{r.ChatID, r.Text}]++
		}
	}
	for _, m := range tg.Messages() {
		accepted[[2]string{m.ChatID, m.Text}] = true
	}
	for k, n := range delivering {
		if n > 1 {
			t.Errorf("the platform got %d delivering requests for %q to chat %s", n, k[1], k[0])
		}
	}
	// A succeeded job was really accepted by the platform.
	var targets []struct {
		ID      int64
		Address string
	}
	if err := store.DB().NewSelect().Table("targets").Column("id", "address").Scan(ctx, &targets); err != nil {
		t.Fatal(err)
	}
	address := map[int64]string{}
	for _, tr := range targets {
		address[tr.ID] = tr.Address
	}
	for _, r := range rows {
		if r.State == string(push.StateSucceeded) && !accepted[[2]string{address[r.TargetID], r.Content}] {
			t.Errorf("job %s is succeeded but the platform never accepted %q for chat %s", r.ID, r.Content, address[r.TargetID])
		}
	}
	// Points: 100 initial points + the ledger = the balance; it never went
	// below zero; each job was charged once and refunded only when canceled
	// or expired, once.
	for id := int64(1); id <= int64(accounts); id++ {
		a, err := store.Account(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ledger, err := store.Ledger(ctx, push.LedgerFilter{AccountID: id})
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(ledger) // the store lists newest first; replay it in order
		balance := int64(0)    // the initial 100 points are the ledger's first row
		charges, refunds := map[string]int{}, map[string]int{}
		for _, e := range ledger {
			balance += e.Amount
			if balance < 0 {
				t.Errorf("account %d: the balance went to %d", id, balance)
			}
			switch e.Kind {
			case push.LedgerCharge:
				charges[e.JobID]++
			case push.LedgerRefund:
				refunds[e.JobID]++
			}
		}
		if balance != a.Points {
			t.Errorf("account %d: the ledger sums to %d, balance %d", id, balance, a.Points)
		}
		for job, n := range charges {
			if n != 1 {
				t.Errorf("job %s charged %d times", job, n)
			}
		}
		for job, n := range refunds {
			st := jobState[job]
			if n != 1 || (st != string(push.StateCanceled) && st != string(push.StateExpired)) {
				t.Errorf("job %s (%s) refunded %d times", job, st, n)
			}
		}
		for _, r := range rows {
			if r.AccountID != id || r.Cost <= 0 {
				continue
			}
			if charges[r.ID] != 1 {
				t.Errorf("job %s (cost %d) charged %d times", r.ID, r.Cost, charges[r.ID])
			}
			if (r.State == string(push.StateCanceled) || r.State == string(push.StateExpired)) && refunds[r.ID] != 1 {
				t.Errorf("job %s is %s without a refund", r.ID, r.State)
			}
		}
	}
}
