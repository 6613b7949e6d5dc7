package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/cluster"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/redis/go-redis/v9"
)

var ctx = context.Background()

// redisBackends are the Redis servers the tests run on: miniredis in the
// test process, and the real server of HERALD_TEST_REDIS. addr returns a
// host:port.
func redisBackends() []struct {
	name string
	addr func(t *testing.T) string
} {
	return []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"miniredis", func(t *testing.T) string { return miniredis.RunT(t).Addr() }},
		{"redis", func(t *testing.T) string { return testkit.HostPort(t, testkit.RedisURL(t)) }},
	}
}

func eachRedis(t *testing.T, test func(t *testing.T, addr string)) {
	for _, b := range redisBackends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.addr(t))
		})
	}
}

// node is one process's Redis client.
func node(t *testing.T, addr string) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

func notifier(t *testing.T, rdb redis.UniversalClient, ns string) *cluster.Notifier {
	n := cluster.NewNotifier(ctx, rdb, cluster.NotifierOptions{Namespace: ns})
	t.Cleanup(func() { n.Close() })
	return n
}

// countedNotifier is a node's Notifier whose Redis commands are counted.
func countedNotifier(t *testing.T, addr, ns string) (*cluster.Notifier, *cluster.CommandCounter) {
	rdb := node(t, addr)
	calls := new(cluster.CommandCounter)
	rdb.AddHook(calls)
	return notifier(t, rdb, ns), calls
}

func expect(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	expectWithin(t, ch, want, 5*time.Second)
}

// expectWithin is expect with a wait of d.
func expectWithin(t *testing.T, ch <-chan string, want string, d time.Duration) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("notice for %s, want %s", got, want)
		}
	case <-time.After(d):
		t.Fatalf("no notice for %s within %s", want, d)
	}
}

// notifyUntilHeard notifies id from a every every until it arrives on
// ch (another node's subscription), failing after within.
func notifyUntilHeard(t *testing.T, a *cluster.Notifier, ch <-chan string, id string, every, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; {
		if err := a.Notify(ctx, id); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-ch:
			if got != id {
				t.Fatalf("notice for %s, want %s", got, id)
			}
			return
		case <-time.After(every):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notice for %s never reached the other node", id)
		}
	}
}

func expectNone(t *testing.T, ch <-chan string) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("unexpected notice for %s", got)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestNotifierAcrossNodes: a job settled on one node wakes the request
// waiting for it on another, and only in the same namespace.
func TestNotifierAcrossNodes(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("n_")
		a := notifier(t, node(t, addr), ns)
		b := notifier(t, node(t, addr), ns)
		other := notifier(t, node(t, addr), testkit.RandomName("n_"))

		onB, stopB := b.Subscribe([]string{"j1", "j2"})
		defer stopB()
		onA, stopA := a.Subscribe([]string{"j1"})
		defer stopA()
		onOther, stopOther := other.Subscribe([]string{"j1"})
		defer stopOther()

		if err := a.Notify(ctx, "j1", "j9"); err != nil {
			t.Fatal(err)
		}
		expect(t, onA, "j1") // the same node: at once
		expect(t, onB, "j1") // another node: through Redis
		expectNone(t, onA)   // its own publication is not delivered twice
		expectNone(t, onOther)
		if err := b.Notify(ctx, "j2"); err != nil {
			t.Fatal(err)
		}
		expect(t, onB, "j2")
		stopB()
		if err := a.Notify(ctx, "j1"); err != nil {
			t.Fatal(err)
		}
		expect(t, onA, "j1")
	})
}

// TestNotifierCarriesSettledRows: a settled job's row goes with its
// notice to the node whose request waits for it, handed to the engine
// before the waiter wakes, equal to the row sent; a node with no waiter
// for a job is given no row for it; a notice without rows wakes waiters
// as before.
func TestNotifierCarriesSettledRows(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("n_")
		a := notifier(t, node(t, addr), ns)
		b := notifier(t, node(t, addr), ns)
		c := notifier(t, node(t, addr), ns)
		var mu sync.Mutex
		got := map[string][]push.Job{}
		for name, n := range map[string]*cluster.Notifier{"a": a, "b": b, "c": c} {
			n.OnSettled(func(j push.Job) {
				mu.Lock()
				defer mu.Unlock()
				got[name] = append(got[name], j)
			})
		}
		at := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)
		rows := []push.Job{
			{ID: "j1", AccountID: 7, BotID: 3, TargetID: 9, Platform: "telegram", TargetType: push.TargetUser, State: push.StateSucceeded,
				Cost: 1, Attempts: 1, PlatformIndex: "4711", IdempotencyKey: "k1", CreatedAt: at, UpdatedAt: at.Add(time.Second),
				StartedAt: at.Add(time.Millisecond), FinishedAt: at.Add(time.Second), ExpiresAt: at.Add(time.Hour)},
			{ID: "j2", AccountID: 7, BotID: 3, Platform: "telegram", State: push.StateFailed, Attempts: 2, Error: "telegram: chat not found (code 400)",
				CreatedAt: at, UpdatedAt: at, FinishedAt: at},
		}
		onB, stopB := b.Subscribe([]string{"j1", "j2"})
		defer stopB()
		if err := a.NotifySettled(ctx, rows...); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"j1", "j2"} {
			expect(t, onB, id)
			mu.Lock()
			n := len(got["b"])
			mu.Unlock()
			if n == 0 {
				t.Fatalf("waiter of %s woken before its row was handed over", id)
			}
		}
		mu.Lock()
		if diff := cmp.Diff(rows, got["b"]); diff != "" {
			t.Errorf("rows handed over on the waiting node (-sent +got):\n%s", diff)
		}
		if len(got["a"])+len(got["c"]) != 0 {
			t.Errorf("rows handed over where no request waits: publisher %d, other node %d", len(got["a"]), len(got["c"]))
		}
		mu.Unlock()
		// Ids alone still wake the waiters, with nothing handed over.
		onB2, stopB2 := b.Subscribe([]string{"j3"})
		defer stopB2()
		if err := a.Notify(ctx, "j3"); err != nil {
			t.Fatal(err)
		}
		expect(t, onB2, "j3")
		mu.Lock()
		if n := len(got["b"]); n != 2 {
			t.Errorf("%d rows handed over after a notice without rows, want the 2 before", n)
		}
		mu.Unlock()
	})
}

// TestNotifierDecodesOnlyItsOwnRows: a node decodes the rows of the jobs
// its requests wait for and no other, each row on its own. Another node's
// row that cannot be read is not even looked at; one of its own that
// cannot be read (or names another job) is left out with a warning, and
// its waiter still wakes (to read the store); the rows beside it are
// handed over all the same.
func TestNotifierDecodesOnlyItsOwnRows(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("n_")
		var logged syncBuffer
		b := cluster.NewNotifier(ctx, node(t, addr), cluster.NotifierOptions{
			Namespace: ns,
			Logger:    slog.New(slog.NewTextHandler(&logged, nil)),
		})
		t.Cleanup(func() { b.Close() })
		var mu sync.Mutex
		var got []push.Job
		b.OnSettled(func(j push.Job) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, j)
		})
		onB, stop := b.Subscribe([]string{"j1", "j3", "j4"})
		defer stop()

		row := func(j push.Job) string {
			t.Helper()
			js, err := json.Marshal(j)
			if err != nil {
				t.Fatal(err)
			}
			return j.ID + " " + string(js)
		}
		j1 := push.Job{ID: "j1", AccountID: 7, State: push.StateSucceeded, Attempts: 1, PlatformIndex: "11"}
		j4 := push.Job{ID: "j4", AccountID: 7, State: push.StateFailed, Attempts: 2, Error: "chat not found"}
		msg := strings.Join([]string{
			"someothernode j1 j2 j3 j4",
			row(j1),
			`j2 {"id": "j2", this is not JSON`,    // another node's: never decoded
			row(push.Job{ID: "j9", AccountID: 7}), // under j3's id: left out
			row(j4),
		}, "\n")
		msg = strings.Replace(msg, "j9 {", "j3 {", 1)
		if err := node(t, addr).Publish(ctx, ns+":settled", msg).Err(); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"j1", "j3", "j4"} {
			expect(t, onB, id)
		}
		mu.Lock()
		if diff := cmp.Diff([]push.Job{j1, j4}, got); diff != "" {
			t.Errorf("rows handed over (-want +got):\n%s", diff)
		}
		mu.Unlock()
		log := logged.String()
		if strings.Contains(log, "job=j2") || !strings.Contains(log, "job=j3") || strings.Count(log, "cannot be read") != 1 {
			t.Errorf("warnings: want one, for j3 alone (j2's row is not this node's to decode); got:\n%s", log)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for a logger's goroutine and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNotifierSurvivesRedisOutage: while Redis is away Notify reports
// Unavailable (the engine logs it; waiters poll), and the subscription
// comes back by itself.
func TestNotifierSurvivesRedisOutage(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("n_")
		proxy := testkit.NewProxy(t, addr)
		a := notifier(t, node(t, addr), ns)
		b := notifier(t, node(t, proxy.Addr()), ns)
		onB, stop := b.Subscribe([]string{"j1"})
		defer stop()

		proxy.Cut()
		if err := b.Notify(ctx, "j1"); push.KindOf(err) != push.Unavailable {
			t.Fatalf("notify with Redis away = %v, want Unavailable", err)
		}
		expect(t, onB, "j1") // local waiters are still told
		proxy.Restore()
		notifyUntilHeard(t, a, onB, "j1", 200*time.Millisecond, 20*time.Second) // the subscription came back
	})
}

// TestRateLimiterShared: two nodes count against one budget per key.
func TestRateLimiterShared(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("r_")
		nodes := []*cluster.RateLimiter{
			cluster.NewRateLimiter(node(t, addr), cluster.RateLimiterOptions{Namespace: ns}),
			cluster.NewRateLimiter(node(t, addr), cluster.RateLimiterOptions{Namespace: ns}),
		}
		// 120 an hour: one more every 30 s, so the test's own time does
		// not refill the budget.
		for i := 0; i < 120; i++ {
			d, err := nodes[i%2].Allow(ctx, "key:1", 120, time.Hour)
			if err != nil || !d.Allowed || d.Remaining != 119-i {
				t.Fatalf("request %d: %+v, %v; want allowed with %d remaining", i+1, d, err, 119-i)
			}
		}
		for i, n := range nodes {
			d, err := n.Allow(ctx, "key:1", 120, time.Hour)
			if err != nil || d.Allowed || d.RetryAfter <= 25*time.Second || d.RetryAfter > 30*time.Second {
				t.Fatalf("request 121 on node %d: %+v, %v; want refused for about 30s", i, d, err)
			}
		}
		if d, _ := nodes[0].Allow(ctx, "key:2", 120, time.Hour); !d.Allowed {
			t.Fatal("another key was refused")
		}
		other := cluster.NewRateLimiter(node(t, addr), cluster.RateLimiterOptions{Namespace: testkit.RandomName("r_")})
		if d, _ := other.Allow(ctx, "key:1", 120, time.Hour); !d.Allowed {
			t.Fatal("another namespace was refused")
		}
	})
}

// TestRateLimiterFallsBack: with Redis away, a node limits on its own.
func TestRateLimiterFallsBack(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		proxy := testkit.NewProxy(t, addr)
		l := cluster.NewRateLimiter(node(t, proxy.Addr()), cluster.RateLimiterOptions{Namespace: testkit.RandomName("r_"), Timeout: 200 * time.Millisecond})
		if d, err := l.Allow(ctx, "k", 3, time.Hour); err != nil || !d.Allowed {
			t.Fatalf("with Redis: %+v, %v", d, err)
		}
		proxy.Cut()
		for i := 0; i < 3; i++ {
			if d, err := l.Allow(ctx, "k", 3, time.Hour); err != nil || !d.Allowed {
				t.Fatalf("fallback request %d: %+v, %v; want allowed", i+1, d, err)
			}
		}
		if d, err := l.Allow(ctx, "k", 3, time.Hour); err != nil || d.Allowed {
			t.Fatalf("fallback request 4: %+v, %v; want refused by the local limit", d, err)
		}
		proxy.Restore()
		// Back on Redis, which counted one request.
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, err := l.Allow(ctx, "k", 3, time.Hour)
			if err == nil && d.Allowed && d.Remaining == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not back on Redis: %+v, %v", d, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// TestNotifierBatchesPublications: notices given while a publication is
// under way go out together in the next one, so that many settling jobs
// cost Redis far fewer publications than notices; every notice still
// reaches the other node, and every Notify returns once its notices are
// published.
func TestNotifierBatchesPublications(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("n_")
		a, calls := countedNotifier(t, addr, ns)
		b := notifier(t, node(t, addr), ns)
		const n = 200
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprint("j", i)
		}
		onB, stop := b.Subscribe(ids)
		defer stop()
		before := calls.Commands()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, id := range ids {
			wg.Go(func() { errs <- a.Notify(ctx, id) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		published := calls.Commands() - before
		got := map[string]bool{}
		for len(got) < n {
			select {
			case id := <-onB:
				got[id] = true
			case <-time.After(5 * time.Second):
				t.Fatalf("%d of %d notices reached the other node", len(got), n)
			}
		}
		if published < 1 || published > n/2 {
			t.Errorf("%d notices took %d publications; want them batched (at most %d)", n, published, n/2)
		}
	})
}

// TestNotifierAloneSkipsPublications: a node whose publications reach no
// other node (Redis counts only its own subscription) publishes nothing
// for a while, and its waiters are still told at once; a node that comes
// meanwhile gets its notices once a publication counts it, and from then
// on each at once.
func TestNotifierAloneSkipsPublications(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("n_")
		a, calls := countedNotifier(t, addr, ns)
		const n = 40
		before := calls.Commands()
		for i := range n {
			id := fmt.Sprint("j", i)
			onA, stop := a.Subscribe([]string{id})
			if err := a.Notify(ctx, id); err != nil {
				t.Fatal(err)
			}
			expect(t, onA, id) // its own waiters, at once
			stop()
			time.Sleep(time.Millisecond) // its first publications come back to its subscription
		}
		if published := calls.Commands() - before; published > n/5 {
			t.Errorf("a node alone published %d times for %d notices, want its first few only", published, n)
		}

		b := notifier(t, node(t, addr), ns)
		onB, stop := b.Subscribe([]string{"late", "next"})
		defer stop()
		notifyUntilHeard(t, a, onB, "late", 50*time.Millisecond, 5*time.Second)
		if err := a.Notify(ctx, "next"); err != nil {
			t.Fatal(err)
		}
		expectWithin(t, onB, "next", 500*time.Millisecond) // less than aloneFor: at once
	})
}
