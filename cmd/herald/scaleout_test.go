package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
	"github.com/redis/go-redis/v9"
)

// The scale-out tests run real herald processes on loopback: API nodes
// (herald serve --workers 0) and workers (herald worker) on one PostgreSQL
// schema and one Redis namespace of their own, sending to a fake Telegram
// in the test process.

// scaleOut is a scale-out installation for one test.
type scaleOut struct {
	*served
	store    *storage.Store // the test's own view of the database
	redisURL string         // the Redis the nodes are given
	ns       string         // their Redis namespace
}

// newScaleOut seeds a fresh PostgreSQL schema with an account, a key, a bot
// and a target. pg is the schema's URL; db and redisURL are what the nodes
// are given (pg or a proxy to it, Redis or a proxy to it); env adds
// settings for every node.
func newScaleOut(t *testing.T, pg, db, redisURL string, env ...string) *scaleOut {
	t.Helper()
	store, err := storage.Open(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ns := testkit.RandomName("h_")
	s := &served{
		tg: fake.NewTelegram(t),
		env: append([]string{"HERALD_DB=" + db, "HERALD_REDIS=" + redisURL, "HERALD_REDIS_NAMESPACE=" + ns,
			"HERALD_SECRET_KEY=" + storage.EncodeSecretKey(storage.NewSecretKey())}, env...),
	}
	s.seed(t)
	return &scaleOut{served: s, store: store, redisURL: redisURL, ns: ns}
}

// redis returns a client of the nodes' Redis, closed when the test ends.
func (c *scaleOut) redis(t *testing.T) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// api starts an API-only node.
func (c *scaleOut) api(t *testing.T, args ...string) *testkit.Process {
	t.Helper()
	return testkit.StartServe(t, heraldBin, c.env, append([]string{"--workers", "0"}, args...)...)
}

// worker starts a worker node.
func (c *scaleOut) worker(t *testing.T, args ...string) *testkit.Process {
	t.Helper()
	return testkit.StartWorker(t, heraldBin, c.env, args...)
}

// newKey creates another API key of the account (a fresh rate budget).
func (c *scaleOut) newKey(t *testing.T) string {
	t.Helper()
	return testkit.MustAdmin(t, heraldBin, c.env, "key", "create", "--account", c.account)["key"].(string)
}

// sendVia posts one message through the node at base.
func (c *scaleOut) sendVia(t *testing.T, base, key, content, idem string) testkit.Response {
	t.Helper()
	var hdr []string
	if idem != "" {
		hdr = []string{"Idempotency-Key", idem}
	}
	bot, _ := strconv.Atoi(c.bot)
	return testkit.Call(t, base, "POST", "/openapi/v1/push/private", key,
		map[string]any{"botId": bot, "target": c.target, "content": content}, hdr...)
}

func data(r testkit.Response) map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// waitState polls the job in the database until it is in state want (not
// through the API, whose rate limit polling would use up).
func (c *scaleOut) waitState(t *testing.T, jobID string, want push.State, timeout time.Duration) push.Job {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j, err := c.store.Job(context.Background(), jobID)
		if err == nil && j.State == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s (%v) after %s, want %s", jobID, j.State, err, timeout, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// texts counts the messages the platform accepted, by text.
func texts(tg *fake.Telegram) map[string]int {
	m := map[string]int{}
	for _, msg := range tg.Messages() {
		m[msg.Text]++
	}
	return m
}

// TestScaleOutCluster: two API nodes and two workers on one PostgreSQL and
// one Redis act as one service.
func TestScaleOutCluster(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.RedisURL(t))
	a, b := c.api(t), c.api(t)
	c.worker(t, "--workers", "2")
	c.worker(t, "--workers", "2")

	t.Run("a send is answered within the sync wait by the node that took it", func(t *testing.T) {
		for i, node := range []*testkit.Process{a, b} {
			content := fmt.Sprintf("via node %d", i)
			r := c.sendVia(t, node.URL, c.key, content, "")
			if r.Status != http.StatusOK || data(r)["status"] != "SUCCESS" {
				t.Fatalf("send through node %d: %d %s; want 200 SUCCESS (a worker sent it, the node heard)", i, r.Status, r.Body)
			}
			if n := texts(c.tg)[content]; n != 1 {
				t.Fatalf("platform received %q %d times", content, n)
			}
		}
	})

	t.Run("100 same-key requests over both nodes deliver once", func(t *testing.T) {
		key := c.newKey(t)
		const n = 100
		results := make([]testkit.Response, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				node := []*testkit.Process{a, b}[i%2]
				results[i] = c.sendVia(t, node.URL, key, "exactly once", "same-key-100")
			}(i)
		}
		wg.Wait()
		var jobID any
		for i, r := range results {
			if r.Status != http.StatusOK && r.Status != http.StatusAccepted {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
			if jobID == nil {
				jobID = data(r)["jobId"]
			}
			if data(r)["jobId"] != jobID {
				t.Fatalf("request %d got job %v, request 0 got %v", i, data(r)["jobId"], jobID)
			}
		}
		c.waitState(t, jobID.(string), push.StateSucceeded, 10*time.Second)
		time.Sleep(200 * time.Millisecond) // a second delivery, if there were one, would arrive now
		if got := texts(c.tg)["exactly once"]; got != 1 {
			t.Fatalf("platform received the message %d times, want 1", got)
		}
	})

	t.Run("a revoked key stops working on every node within one second", func(t *testing.T) {
		k := testkit.MustAdmin(t, heraldBin, c.env, "key", "create", "--account", c.account)
		key, id := k["key"].(string), fmt.Sprint(k["id"])
		nodes := []*testkit.Process{a, b}
		for i, node := range nodes {
			// Each node authenticates the key (and remembers it).
			if r := testkit.Call(t, node.URL, "GET", "/openapi/queue-request?key=none", key, nil); r.Status != http.StatusOK {
				t.Fatalf("node %d before the revocation: %d %s", i, r.Status, r.Body)
			}
		}
		testkit.MustAdmin(t, heraldBin, c.env, "key", "revoke", "--id", id)
		revoked := time.Now()
		for i, node := range nodes {
			for {
				r := testkit.Call(t, node.URL, "GET", "/openapi/queue-request?key=none", key, nil)
				if r.Status == http.StatusForbidden && r.JSON()["error"] == "key_revoked" {
					break
				}
				if r.Status != http.StatusOK {
					t.Fatalf("node %d after the revocation: %d %s", i, r.Status, r.Body)
				}
				if time.Since(revoked) > time.Second {
					t.Fatalf("node %d still accepts the key %s after it was revoked", i, time.Since(revoked))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})

	t.Run("the rate limit is shared by the nodes", func(t *testing.T) {
		key := c.newKey(t)
		const n = 240 // twice the limit: per-node limits would admit them all
		type answer struct {
			status int
			retry  string
			reason any
		}
		answers := make([]answer, n)
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				node := []*testkit.Process{a, b}[i%2]
				r := testkit.Call(t, node.URL, "GET", "/openapi/queue-request?key=none", key, nil)
				answers[i] = answer{r.Status, r.Header.Get("Retry-After"), r.JSON()["error"]}
			}(i)
		}
		wg.Wait()
		elapsed := time.Since(start)
		admitted := 0
		var refused [2]int // per node
		for i, ans := range answers {
			switch ans.status {
			case http.StatusOK:
				admitted++
			case http.StatusTooManyRequests:
				if ans.retry == "" || ans.reason != "rate_limited" {
					t.Fatalf("request %d: 429 with Retry-After %q and error %v", i, ans.retry, ans.reason)
				}
				refused[i%2]++
			default:
				t.Fatalf("request %d: status %d", i, ans.status)
			}
		}
		// 120 a minute with a burst of 120 (GCRA): the budget refills one
		// request every 0.5 s while the requests run.
		most := 120 + int(math.Ceil(elapsed.Seconds()/0.5))
		t.Logf("%d of %d requests admitted in %s over two nodes (%d and %d refused)", admitted, n, elapsed.Round(time.Millisecond), refused[0], refused[1])
		if admitted < 120 || admitted > most {
			t.Fatalf("%d of %d requests admitted in %s over two nodes; want 120 to %d (one shared budget)", admitted, n, elapsed, most)
		}
		if refused[0] == 0 || refused[1] == 0 {
			t.Fatalf("refused %d on node A and %d on node B: both must enforce the shared budget", refused[0], refused[1])
		}
	})
}

// TestScaleOutWorkerKilled: a worker killed with SIGKILL in the middle of a
// send leaves its job running; asynq hands the task (here a batch of three
// jobs, the other two of which the worker had handed back) to another
// worker once the dead worker's lease has run out (about a minute), and
// that worker makes the job uncertain without sending it again. The other
// jobs are delivered once.
func TestScaleOutWorkerKilled(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.RedisURL(t))
	a := c.api(t, "--sync-wait", "300ms")
	w1 := c.worker(t, "--workers", "1")
	// The doomed send is a batch to three chats: its three jobs are one
	// task in Redis; the worker, with one slot, sends one and hands the
	// other two back to the queue as tasks of their own.
	targets := []int{atoi(c.target)}
	for _, chat := range []string{"778", "779"} {
		c.tg.AddChat(chat)
		tr := testkit.MustAdmin(t, heraldBin, c.env, "target", "bind", "--bot", c.bot, "--type", "user", "--address", chat)
		targets = append(targets, int(tr["id"].(float64)))
	}
	c.tg.Block()
	r := testkit.Call(t, a.URL, "POST", "/openapi/batch-send", c.key,
		map[string]any{"bot_id": atoi(c.bot), "target_ids": targets, "content": "doomed"})
	if r.Status != http.StatusAccepted {
		t.Fatalf("batch send: %d %s", r.Status, r.Body)
	}
	var batch []string
	for _, it := range data(r)["results"].([]any) {
		if id, ok := it.(map[string]any)["jobId"].(string); ok {
			batch = append(batch, id)
		}
	}
	if len(batch) != 3 {
		t.Fatalf("batch send answered %s, want three unfinished jobs", r.Body)
	}
	<-c.tg.Arrived() // the worker is sending one of them
	w1.Kill()
	killed := time.Now()
	unblockWhenAbandoned(t, c.tg)

	c.worker(t, "--workers", "2")
	// The two jobs the killed worker handed back are sent by the new one;
	// the one it was sending stays running until its batch comes back.
	var doomed string
	for deadline := time.Now().Add(10 * time.Second); doomed == ""; time.Sleep(50 * time.Millisecond) {
		states := map[push.State][]string{}
		for _, id := range batch {
			j, _ := c.store.Job(context.Background(), id)
			states[j.State] = append(states[j.State], id)
		}
		if len(states[push.StateSucceeded]) == 2 && len(states[push.StateRunning]) == 1 {
			doomed = states[push.StateRunning][0]
		} else if time.Now().After(deadline) {
			t.Fatalf("the batch's jobs by state: %v; want two succeeded and one running", states)
		}
	}
	var others []string
	for i := 0; i < 3; i++ {
		r := c.sendVia(t, a.URL, c.key, fmt.Sprintf("after %d", i), "")
		if r.Status != http.StatusOK && r.Status != http.StatusAccepted {
			t.Fatalf("send %d: %d %s", i, r.Status, r.Body)
		}
		others = append(others, data(r)["jobId"].(string))
	}
	for _, id := range others {
		c.waitState(t, id, push.StateSucceeded, 10*time.Second)
	}
	if j, _ := c.store.Job(context.Background(), doomed); j.State != push.StateRunning {
		t.Fatalf("the killed worker's job is %s, want still running", j.State)
	}
	// asynq's lease is 30 s and its recoverer takes tasks whose lease ran
	// out 30 s before, once a minute: the job comes back about a minute
	// after the kill.
	j := c.waitState(t, doomed, push.StateUncertain, 100*time.Second-time.Since(killed))
	if j.Error == "" {
		t.Fatal("the job became uncertain without a reason")
	}
	// Through the API too.
	if q := testkit.Call(t, a.URL, "GET", "/openapi/queue/"+doomed, c.key, nil); data(q)["status"] != "uncertain" {
		t.Fatalf("query of the uncertain job: %d %s", q.Status, q.Body)
	}
	t.Logf("the killed worker's job became uncertain %s after the kill", time.Since(killed).Round(time.Second))
	time.Sleep(500 * time.Millisecond)
	if n := c.tg.Requests(); n != 6 {
		t.Fatalf("platform saw %d send requests, want 6 (the doomed one once, the batch's two others, three more)", n)
	}
	want := map[string]int{"doomed": 2, "after 0": 1, "after 1": 1, "after 2": 1}
	if diff := cmp.Diff(want, texts(c.tg)); diff != "" {
		t.Fatalf("platform accepted (-want +got):\n%s", diff)
	}
}

// TestScaleOutServeNodeKilled: a serve node with workers sends the job it
// accepts itself (a local run: no task in Redis but its safety task) and
// is killed in the middle of the send. The safety task falls due once the
// node's lease (30 s) has run out and a worker makes the job uncertain,
// without sending it again.
func TestScaleOutServeNodeKilled(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.RedisURL(t))
	s := testkit.StartServe(t, heraldBin, c.env, "--workers", "1", "--sync-wait", "300ms")
	c.tg.Block()
	r := c.sendVia(t, s.URL, c.key, "doomed", "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	doomed := data(r)["jobId"].(string)
	<-c.tg.Arrived() // the node is sending it

	tasks, err := c.redis(t).Keys(context.Background(), "asynq:{"+c.ns+"}:t:*").Result()
	if err != nil || len(tasks) != 1 || !strings.Contains(tasks[0], ":t:local-") {
		t.Fatalf("tasks in Redis while the node sends: %v, %v; want only the safety task of a local run", tasks, err)
	}

	s.Kill()
	killed := time.Now()
	unblockWhenAbandoned(t, c.tg)
	c.worker(t, "--workers", "1")
	j := c.waitState(t, doomed, push.StateUncertain, 60*time.Second)
	if j.Error == "" {
		t.Fatal("the job became uncertain without a reason")
	}
	t.Logf("the killed node's job became uncertain %s after the kill", time.Since(killed).Round(time.Second))

	a := c.api(t)
	r = c.sendVia(t, a.URL, c.key, "after", "")
	if r.Status != http.StatusOK && r.Status != http.StatusAccepted {
		t.Fatalf("send after: %d %s", r.Status, r.Body)
	}
	c.waitState(t, data(r)["jobId"].(string), push.StateSucceeded, 10*time.Second)
	time.Sleep(500 * time.Millisecond)
	if n := c.tg.Requests(); n != 2 {
		t.Fatalf("platform saw %d send requests, want 2 (the doomed one once, abandoned by the killed node; one more)", n)
	}
	want := map[string]int{"after": 1}
	if diff := cmp.Diff(want, texts(c.tg)); diff != "" {
		t.Fatalf("platform accepted (-want +got):\n%s", diff)
	}
}

// TestScaleOutRedisFlushed: Redis loses every queued task (FLUSHALL); the
// reconciler finds the jobs still queued in PostgreSQL and enqueues them
// again, and each is delivered once.
func TestScaleOutRedisFlushed(t *testing.T) {
	t.Parallel()
	redisURL := testkit.StartRedisServer(t) // FLUSHALL must not touch other tests
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, redisURL, "HERALD_RECONCILE_INTERVAL=1s")
	a := c.api(t, "--sync-wait", "100ms")
	var ids []string
	for i := 0; i < 5; i++ {
		r := c.sendVia(t, a.URL, c.key, fmt.Sprintf("m%d", i), "")
		if r.Status != http.StatusAccepted {
			t.Fatalf("send %d with no worker: %d %s", i, r.Status, r.Body)
		}
		ids = append(ids, data(r)["jobId"].(string))
	}
	if err := c.redis(t).FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	c.worker(t, "--workers", "2")
	for _, id := range ids {
		c.waitState(t, id, push.StateSucceeded, 20*time.Second)
	}
	time.Sleep(1500 * time.Millisecond) // another reconcile round: nothing is sent twice
	want := map[string]int{"m0": 1, "m1": 1, "m2": 1, "m3": 1, "m4": 1}
	if diff := cmp.Diff(want, texts(c.tg)); diff != "" {
		t.Fatalf("platform accepted (-want +got):\n%s", diff)
	}
}

// TestScaleOutRedisDown: while Redis is unreachable, a send is still
// accepted (202) and stored in PostgreSQL; once Redis is back the
// reconciler enqueues it and a worker delivers it, once.
func TestScaleOutRedisDown(t *testing.T) {
	t.Parallel()
	redisURL := testkit.RedisURL(t)
	proxy := testkit.NewProxy(t, testkit.HostPort(t, redisURL))
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.WithHost(t, redisURL, proxy.Addr()), "HERALD_RECONCILE_INTERVAL=1s")
	a := c.api(t, "--sync-wait", "500ms")
	c.worker(t, "--workers", "2")
	if r := c.sendVia(t, a.URL, c.key, "before", ""); r.Status != http.StatusOK {
		t.Fatalf("send with Redis up: %d %s", r.Status, r.Body)
	}

	proxy.Cut()
	r := c.sendVia(t, a.URL, c.key, "during", "outage-1")
	if r.Status != http.StatusAccepted || data(r)["jobId"] == nil {
		t.Fatalf("send with Redis down: %d %s; want 202 with the job id", r.Status, r.Body)
	}
	id := data(r)["jobId"].(string)
	if j, err := c.store.Job(context.Background(), id); err != nil || j.State != push.StateQueued {
		t.Fatalf("job during the outage: %s, %v; want queued in the database", j.State, err)
	}
	// The same request again is answered from PostgreSQL.
	if again := c.sendVia(t, a.URL, c.key, "during", "outage-1"); again.Status != http.StatusAccepted || data(again)["jobId"] != id {
		t.Fatalf("resubmission during the outage: %d %s", again.Status, again.Body)
	}

	proxy.Restore()
	c.waitState(t, id, push.StateSucceeded, 30*time.Second)
	time.Sleep(1500 * time.Millisecond)
	if diff := cmp.Diff(map[string]int{"before": 1, "during": 1}, texts(c.tg)); diff != "" {
		t.Fatalf("platform accepted (-want +got):\n%s", diff)
	}
}

// TestScaleOutRedisStoppedAnswersWithinSyncWait: with the nodes' Redis
// stopped (its port refusing connections, their clients dialling again
// and again), a send is still answered within its synchronous wait. A
// node with free workers sends it itself (its job is claimed with its
// request, and needs no queue), once; an API-only node answers 202: the
// enqueue that cannot reach Redis takes its time from the wait instead of
// adding to it, and the job stays queued in PostgreSQL for the
// reconciler.
func TestScaleOutRedisStoppedAnswersWithinSyncWait(t *testing.T) {
	t.Parallel()
	rs := testkit.StartRedisProcess(t)
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, rs.URL())
	const wait = 2 * time.Second
	// Without pacing: a send to the chat of the one before within a second
	// would wait in the queue for its turn.
	a := testkit.StartServe(t, heraldBin, c.env, "--sync-wait", wait.String(), "--pacing=false")
	api := c.api(t, "--sync-wait", wait.String())
	if r := c.sendVia(t, a.URL, c.key, "before", ""); r.Status != http.StatusOK {
		t.Fatalf("send with Redis up: %d %s", r.Status, r.Body)
	}
	rs.Stop()
	want := map[string]int{"before": 1}
	for i := range 3 {
		for _, n := range []struct {
			name   string
			url    string
			status int
			state  push.State
		}{{"serve", a.URL, http.StatusOK, push.StateSucceeded}, {"API-only", api.URL, http.StatusAccepted, push.StateQueued}} {
			text := fmt.Sprintf("%s %d", n.name, i)
			began := time.Now()
			r := c.sendVia(t, n.url, c.key, text, "")
			took := time.Since(began)
			if r.Status != n.status || data(r)["jobId"] == nil {
				t.Fatalf("send %d to the %s node with Redis stopped: %d %s; want %d with the job id", i, n.name, r.Status, r.Body, n.status)
			}
			if took > wait+time.Second {
				t.Fatalf("send %d to the %s node with Redis stopped answered after %s; the synchronous wait is %s", i, n.name, took.Round(time.Millisecond), wait)
			}
			id := data(r)["jobId"].(string)
			if j, err := c.store.Job(context.Background(), id); err != nil || j.State != n.state {
				t.Fatalf("job of the %s node during the outage: %s, %v; want %s in the database", n.name, j.State, err, n.state)
			}
			if n.state == push.StateSucceeded {
				want[text] = 1
			}
		}
	}
	if diff := cmp.Diff(want, texts(c.tg)); diff != "" {
		t.Fatalf("platform accepted (-want +got):\n%s", diff)
	}
}

// TestScaleOutPostgresDown: with PostgreSQL unreachable a send is refused
// with 503 and a Retry-After before anything is written; once it is back,
// sends work again and the refused one left no trace.
func TestScaleOutPostgresDown(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	proxy := testkit.NewProxy(t, testkit.HostPort(t, pg))
	c := newScaleOut(t, pg, testkit.WithHost(t, pg, proxy.Addr()), testkit.RedisURL(t))
	a := testkit.StartServe(t, heraldBin, c.env) // API and workers in one node
	if r := c.sendVia(t, a.URL, c.key, "before", ""); r.Status != http.StatusOK {
		t.Fatalf("send with PostgreSQL up: %d %s", r.Status, r.Body)
	}

	proxy.Cut()
	r := c.sendVia(t, a.URL, c.key, "during", "pg-outage")
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.JSON()["error"] != "database_unavailable" {
		t.Fatalf("send with PostgreSQL down: %d %v %s; want 503 database_unavailable with Retry-After", r.Status, r.Header, r.Body)
	}

	proxy.Restore()
	var after testkit.Response
	for deadline := time.Now().Add(20 * time.Second); ; {
		after = c.sendVia(t, a.URL, c.key, "after", "")
		if after.Status == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if after.Status != http.StatusOK {
		t.Fatalf("send after PostgreSQL is back: %d %s", after.Status, after.Body)
	}
	// The refused request left nothing: its key is free and only two jobs
	// exist.
	var states []string
	if err := c.store.DB().NewSelect().Table("jobs").Column("state").Order("seq").Scan(context.Background(), &states); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(states, []string{"succeeded", "succeeded"}) {
		t.Fatalf("jobs after the outage: %v, want the two delivered sends only", states)
	}
	if diff := cmp.Diff(map[string]int{"before": 1, "after": 1}, texts(c.tg)); diff != "" {
		t.Fatalf("platform accepted (-want +got):\n%s", diff)
	}
}

// TestScaleOutWorkerDrains: SIGTERM lets a worker finish the send it is
// making (within --drain-timeout) and exit 0; the job is not handed to
// another worker and not sent twice.
// TestScaleOutWorkerOps: a worker with --ops-addr answers the probes and
// the metrics there. It counts the jobs it settles and its platform calls
// (an API-only node, which settles nothing, does not: each job is counted
// once in the installation), answers /readyz with 503 "draining" while it
// drains, and refuses anything else, a send included, with 404.
func TestScaleOutWorkerOps(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.RedisURL(t))
	a := c.api(t, "--sync-wait", "1s")
	w := c.worker(t, "--workers", "1", "--ops-addr", "127.0.0.1:0", "--drain-timeout", "10s")
	if w.Ops == "" {
		t.Fatalf("the worker printed no ops URL:\n%s", w.Output())
	}
	get := func(base, path string) (int, http.Header, map[string]any, string) {
		t.Helper()
		r := testkit.Call(t, base, "GET", path, "", nil)
		var m map[string]any
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			m = r.JSON()
		}
		return r.Status, r.Header, m, string(r.Body)
	}
	if st, _, m, _ := get(w.Ops, "/healthz"); st != http.StatusOK || !cmp.Equal(m, map[string]any{"status": "ok"}) {
		t.Errorf("/healthz: %d %v", st, m)
	}
	ready := map[string]any{"status": "ready", "checks": map[string]any{"database": "ok", "redis": "ok"}}
	if st, _, m, _ := get(w.Ops, "/readyz"); st != http.StatusOK || !cmp.Equal(m, ready) {
		t.Errorf("/readyz: %d %v", st, m)
	}

	r := c.sendVia(t, a.URL, c.key, "counted once", "")
	if r.Status != http.StatusOK || data(r)["status"] != "SUCCESS" {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	settled := `herald_jobs_settled_total{platform="telegram",state="succeeded"} `
	calls := `herald_platform_call_duration_seconds_count{outcome="ok",platform="telegram"} `
	metric := func(body, name string) string {
		for line := range strings.Lines(body) {
			if v, ok := strings.CutPrefix(line, name); ok {
				return strings.TrimSpace(v)
			}
		}
		return "absent"
	}
	_, _, _, workerMetrics := get(w.Ops, "/metrics")
	_, _, _, apiMetrics := get(strings.TrimSuffix(a.URL, "/api"), "/metrics")
	for _, m := range []struct{ node, body, name, want string }{
		{"worker", workerMetrics, settled, "1"},
		{"worker", workerMetrics, calls, "1"},
		{"API node", apiMetrics, settled, "0"},
	} {
		if got := metric(m.body, m.name); got != m.want {
			t.Errorf("%s's %s= %s, want %s", m.node, m.name, got, m.want)
		}
	}
	if !strings.Contains(workerMetrics, "\nherald_build_info{") {
		t.Errorf("the worker's /metrics has no herald_build_info:\n%s", workerMetrics)
	}

	if st, _, m, _ := get(w.Ops, "/api/openapi/v1/push/private"); st != http.StatusNotFound || !strings.Contains(fmt.Sprint(m["message"]), "takes no sends") {
		t.Errorf("an API path on the worker: %d %v", st, m)
	}
	post := testkit.Call(t, w.Ops, "POST", "/healthz", "", nil)
	if post.Status != http.StatusMethodNotAllowed || post.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /healthz: %d, Allow %q", post.Status, post.Header.Get("Allow"))
	}

	// Draining: /readyz says so while a send runs, then the worker exits
	// once the send has ended.
	for len(c.tg.Arrived()) > 0 {
		<-c.tg.Arrived()
	}
	c.tg.Block()
	r = c.sendVia(t, a.URL, c.key, "in flight at the drain", "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("send held by the platform: %d %s", r.Status, r.Body)
	}
	id := data(r)["jobId"].(string)
	<-c.tg.Arrived()
	stopped := make(chan error, 1)
	go func() { stopped <- w.Terminate(15 * time.Second) }()
	for deadline := time.Now().Add(5 * time.Second); ; {
		st, hdr, m, _ := get(w.Ops, "/readyz")
		if st == http.StatusServiceUnavailable && m["status"] == "draining" && hdr.Get("Retry-After") != "" {
			break
		}
		if time.Now().After(deadline) {
			c.tg.Unblock()
			t.Fatalf("/readyz during the drain: %d %v", st, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.tg.Unblock()
	if err := <-stopped; err != nil {
		t.Fatalf("worker did not exit cleanly on SIGTERM: %v\n%s", err, w.Output())
	}
	c.waitState(t, id, push.StateSucceeded, 5*time.Second)
}

func TestScaleOutWorkerDrains(t *testing.T) {
	t.Parallel()
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.RedisURL(t))
	a := c.api(t, "--sync-wait", "200ms")
	w1 := c.worker(t, "--workers", "1", "--drain-timeout", "10s")
	c.tg.SetDelay(1500 * time.Millisecond)
	r := c.sendVia(t, a.URL, c.key, "in flight", "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	id := data(r)["jobId"].(string)
	<-c.tg.Arrived()
	c.worker(t, "--workers", "1") // would take the job if it were handed back
	if err := w1.Terminate(15 * time.Second); err != nil {
		t.Fatalf("worker did not exit cleanly on SIGTERM: %v\n%s", err, w1.Output())
	}
	if j := c.waitState(t, id, push.StateSucceeded, 5*time.Second); j.Attempts != 1 {
		t.Fatalf("job after the drain: %+v", j)
	}
	time.Sleep(500 * time.Millisecond)
	if n := c.tg.Requests(); n != 1 {
		t.Fatalf("platform saw %d requests, want 1", n)
	}
}
