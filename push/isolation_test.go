package push_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// refusedURL returns a loopback URL where nothing listens: a platform
// whose every call is refused before anything is sent.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// throttled429 makes a fake Telegram answer its next n sends with 429 and
// a retry_after of the seconds given.
func throttled429(tg *fake.Telegram, n, seconds int) {
	faults := make([]fake.TelegramFault, n)
	for i := range faults {
		faults[i] = fake.TelegramFault{Status: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", seconds), RetryAfter: seconds}
	}
	tg.Fail(faults...)
}

// deadBot is a bot of its own account whose platform is down in one way,
// with targets bound to it.
type deadBot struct {
	bot     push.Bot
	account push.Account
	targets []int64
}

// newDeadBot makes an account with a Telegram bot at apiBase and targets
// bound to it; chats, when given, is the fake server that knows them.
func newDeadBot(t *testing.T, h *testkit.Herald, name, apiBase, token string, targets int, chats *fake.Telegram) deadBot {
	t.Helper()
	a := h.Account(t, name)
	b := h.PlatformBot(t, a.ID, "telegram", map[string]string{"token": token, "api_base": apiBase})
	d := deadBot{bot: b, account: a}
	for range targets {
		tg := h.Target(t, b.ID, push.TargetUser, "")
		if chats != nil {
			chats.AddChat(tg.Address)
		}
		d.targets = append(d.targets, tg.ID)
	}
	return d
}

// refusedBot makes an account with a Telegram bot whose every call is
// refused before anything is sent.
func refusedBot(t *testing.T, h *testkit.Herald, targets int) deadBot {
	t.Helper()
	return newDeadBot(t, h, "down", refusedURL(t), fake.NewTelegram(t).NewBot(), targets, nil)
}

// waitParked waits until a job waits to retry (running, with RetryAt set)
// and returns it.
func waitParked(t *testing.T, h *testkit.Herald, id string) push.Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // every queued job gets its turn: a loaded machine takes a while
	for {
		j, err := h.Engine.Jobs().Get(ctx, push.System(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == push.StateRunning && !j.RetryAt.IsZero() {
			return j
		}
		if !j.State.Pending() || time.Now().After(deadline) {
			t.Fatalf("job %s is %s (retry at %v, error %q), want running and waiting to retry", id, j.State, j.RetryAt, j.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sendOthers sends n messages of the fixture's account one after the
// other and returns how long each took from submission to the fake
// platform's receipt.
func sendOthers(t *testing.T, h *testkit.Herald, f testkit.Fixture, n int) []time.Duration {
	t.Helper()
	before := len(h.Telegram.Messages())
	submitted := make(map[string]time.Time)
	var ids []string
	for i := range n {
		text := fmt.Sprintf("other %d", i)
		submitted[text] = time.Now()
		res, err := send(t, h, f, "", text)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Jobs[0].ID)
	}
	for _, id := range ids {
		h.WaitJob(t, id, push.StateSucceeded, 10*time.Second)
	}
	var took []time.Duration
	for _, m := range h.Telegram.Messages()[before:] {
		at, ok := submitted[m.Text]
		if !ok {
			t.Fatalf("the other account's platform received %q, which it did not send", m.Text)
		}
		took = append(took, m.At.Sub(at))
		delete(submitted, m.Text)
	}
	if len(submitted) != 0 {
		t.Fatalf("messages never received (or received twice): %v", submitted)
	}
	return took
}

// TestDeadBotsDoNotStallOtherAccounts: 100 queued jobs of a bot whose
// platform answers 429 with a 60 s retry_after, and 50 of a bot whose
// platform refuses connections, leave every worker free for another
// account, whose sends arrive within the usual latency.
func TestDeadBotsDoNotStallOtherAccounts(t *testing.T) {
	// The server's default of 8 workers: with 4, the 150 dead jobs'
	// first calls and parks, each a transaction, kept a race-enabled
	// scale-out run on a loaded machine near the bound below.
	h := testkit.New(t, testkit.WithWorkers(8),
		testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond, SendWindow: 5 * time.Minute}))
	f := h.Seed(t)
	throttled := fake.NewTelegram(t)
	throttled429(throttled, 1000, 60)
	slow := newDeadBot(t, h, "throttled", throttled.URL(), throttled.NewBot(), 50, nil)
	down := refusedBot(t, h, 50)

	var slowJobs []string
	for i := range 2 {
		res, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(slow.account.ID), push.BatchRequest{BotID: slow.bot.ID, TargetIDs: slow.targets, Message: text(fmt.Sprintf("batch %d", i))})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			slowJobs = append(slowJobs, j.ID)
		}
	}
	if _, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(down.account.ID), push.BatchRequest{BotID: down.bot.ID, TargetIDs: down.targets, Message: text("down")}); err != nil {
		t.Fatal(err)
	}

	took := sendOthers(t, h, f, 5)
	t.Logf("the other account's messages arrived after %v", took)
	for i, d := range took {
		if d > time.Second {
			t.Errorf("the other account's message %d arrived %s after it was sent, want under 1s", i, d)
		}
	}
	// Every throttled job made its one call and waits for its minute
	// without a worker; none was sent again early.
	for _, id := range slowJobs {
		j := waitParked(t, h, id)
		if j.Attempts != 1 || time.Until(j.RetryAt) < 50*time.Second {
			t.Fatalf("throttled job: %d attempts, retry in %s; want 1 attempt and about 60s to wait", j.Attempts, time.Until(j.RetryAt))
		}
	}
	if got := throttled.Requests(); got != 100 {
		t.Fatalf("the throttled platform saw %d sends, want 100 (one per job)", got)
	}
}

// TestRetryWaitHoldsNoWorker: with one worker, a job waiting 16 s to
// retry leaves it to another account's send, which arrives at once.
func TestRetryWaitHoldsNoWorker(t *testing.T) {
	cases := []struct {
		name string
		bot  func(t *testing.T, h *testkit.Herald) deadBot
	}{
		{"429 with retry_after 16", func(t *testing.T, h *testkit.Herald) deadBot {
			tg := fake.NewTelegram(t)
			throttled429(tg, 1, 16)
			return newDeadBot(t, h, "throttled", tg.URL(), tg.NewBot(), 1, nil)
		}},
		{"connection refused with a backoff of 16s", func(t *testing.T, h *testkit.Herald) deadBot {
			return refusedBot(t, h, 1)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := testkit.New(t, testkit.WithWorkers(1),
				testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond, SendWindow: 5 * time.Minute}),
				testkit.WithEngineOptions(func(o *push.Options) { o.RetryBackoff = 16 * time.Second }))
			f := h.Seed(t)
			dead := tc.bot(t, h)
			res, err := h.Engine.Send(ctx, push.AccountPrincipal(dead.account.ID), push.SendRequest{BotID: dead.bot.ID, TargetID: dead.targets[0], Message: text("waits")})
			if err != nil {
				t.Fatal(err)
			}
			parked := waitParked(t, h, res.Jobs[0].ID)
			if wait := time.Until(parked.RetryAt); wait < 14*time.Second || wait > 17*time.Second {
				t.Fatalf("the job retries in %s, want about 16s", wait)
			}
			took := sendOthers(t, h, f, 1)
			if took[0] > time.Second {
				t.Fatalf("the other account's message arrived %s after it was sent, want under 1s", took[0])
			}
			if j := waitParked(t, h, res.Jobs[0].ID); j.Attempts != 1 || !j.RetryAt.Equal(parked.RetryAt) {
				t.Fatalf("the waiting job now has %d attempts and retries at %v; want it untouched", j.Attempts, j.RetryAt)
			}
		})
	}
}

// TestRetryWaitSurvivesRestart: a job waiting to retry when its server
// stops is delivered once by the next server, not before it is due.
func TestRetryWaitSurvivesRestart(t *testing.T) {
	cases := []struct {
		name    string
		stopped time.Duration // how long no server runs
	}{
		{"restarted before the retry is due", 0},
		{"restarted after the retry was due", 2500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := t.TempDir() + "/herald.db"
			tg := fake.NewTelegram(t)
			limits := testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond, SendWindow: 5 * time.Minute})
			first := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), limits, testkit.WithPoints(push.Points{Enabled: true}))
			f := first.Seed(t)
			throttled429(tg, 1, 2)
			res, err := send(t, first, f, "", "after the restart")
			if err != nil {
				t.Fatal(err)
			}
			id := res.Jobs[0].ID
			parked := waitParked(t, first, id)
			first.Stop()
			time.Sleep(tc.stopped)

			second := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), limits, testkit.WithPoints(push.Points{Enabled: true}))
			j := second.WaitJob(t, id, push.StateSucceeded, 10*time.Second)
			if j.Attempts != 2 || j.Error != "" {
				t.Fatalf("job: %d attempts, error %q; want 2 attempts and no error", j.Attempts, j.Error)
			}
			msgs := tg.Messages()
			if len(msgs) != 1 || msgs[0].Text != "after the restart" {
				t.Fatalf("platform received %+v, want the message once", msgs)
			}
			if msgs[0].At.Before(parked.RetryAt.Add(-10 * time.Millisecond)) {
				t.Fatalf("delivered at %v, before the retry was due at %v", msgs[0].At, parked.RetryAt)
			}
			if got := tg.Requests(); got != 2 {
				t.Fatalf("platform saw %d sends, want 2", got)
			}
			if got := second.Balance(t, f.Account.ID); got != 99 {
				t.Fatalf("balance %d, want 99", got)
			}
			if n, _ := second.Store.Backlog(ctx, 0); n != 0 {
				t.Fatalf("backlog %d, want 0", n)
			}
		})
	}
}

// TestRetryWaitPastTheSendWindowFails: a job whose send window ended
// while it waited to retry (no server ran) fails without another call,
// with its last error, and is not refunded (it was started).
func TestRetryWaitPastTheSendWindowFails(t *testing.T) {
	db := t.TempDir() + "/herald.db"
	tg := fake.NewTelegram(t)
	limits := testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond, SendWindow: 5 * time.Minute})
	first := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), limits)
	f := first.Seed(t)
	throttled429(tg, 1, 2)
	res, err := send(t, first, f, "", "too late")
	if err != nil {
		t.Fatal(err)
	}
	waitParked(t, first, res.Jobs[0].ID)
	first.Stop()

	second := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), limits, testkit.WithoutStart())
	second.Clock.Advance(10 * time.Minute)
	if err := second.Engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j := second.WaitJob(t, res.Jobs[0].ID, push.StateFailed, 10*time.Second)
	if !strings.Contains(j.Error, "the send window of 5m0s ended while the job waited to retry") || strings.Count(j.Error, "(code 429)") != 1 {
		t.Fatalf("error %q, want the send window's end and the last error (code 429) once", j.Error)
	}
	if got := tg.Requests(); got != 1 {
		t.Fatalf("platform saw %d sends, want 1", got)
	}
}

// TestBotConcurrencyCap: a bot whose platform hangs holds at most its cap
// of workers (a quarter of them), so another account's sends go on; on
// the scale-out backend the cap holds across two nodes.
func TestBotConcurrencyCap(t *testing.T) {
	nodes := []int{1}
	if testkit.DefaultBackend(t) == testkit.ScaleOut {
		nodes = append(nodes, 2)
	}
	for _, n := range nodes {
		t.Run(fmt.Sprintf("%d nodes", n), func(t *testing.T) {
			db := t.TempDir() + "/herald.db"
			tg := fake.NewTelegram(t)
			opts := []testkit.Option{testkit.WithDB(db), testkit.WithTelegram(tg), testkit.WithWorkers(8),
				testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond})}
			h := testkit.New(t, opts...)
			for range n - 1 {
				testkit.New(t, opts...)
			}
			f := h.Seed(t)
			hanging := fake.NewTelegram(t)
			hanging.Block()
			slow := newDeadBot(t, h, "hanging", hanging.URL(), hanging.NewBot(), 20, hanging)
			res, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(slow.account.ID), push.BatchRequest{BotID: slow.bot.ID, TargetIDs: slow.targets, Message: text("hangs")})
			if err != nil {
				t.Fatal(err)
			}

			for i, took := range sendOthers(t, h, f, 5) {
				if took > time.Second {
					t.Errorf("the other account's message %d arrived %s after it was sent, want under 1s", i, took)
				}
			}
			time.Sleep(300 * time.Millisecond) // more calls, if the cap let them, arrive now
			if got := hanging.Requests(); got != 2 {
				t.Fatalf("the hanging platform has %d calls in flight, want 2 (the cap: a quarter of 8 workers, across %d nodes)", got, n)
			}
			hanging.Unblock()
			for _, j := range res.Jobs {
				h.WaitJob(t, j.ID, push.StateSucceeded, 20*time.Second)
			}
			if got := len(hanging.Messages()); got != 20 {
				t.Fatalf("the hanging platform received %d messages, want 20", got)
			}
		})
	}
}

// TestAttemptsCountPlatformCalls: a job's attempts are its platform calls,
// and the code of the error that made it give up is said once.
func TestAttemptsCountPlatformCalls(t *testing.T) {
	t.Run("succeeded after retries", func(t *testing.T) {
		h := testkit.New(t)
		f := h.Seed(t)
		throttled429(h.Telegram, 3, 0)
		res, err := send(t, h, f, "", "fourth time")
		if err != nil {
			t.Fatal(err)
		}
		j := h.WaitJob(t, res.Jobs[0].ID, push.StateSucceeded, 10*time.Second)
		if diff := cmp.Diff([]int{4, 4}, []int{j.Attempts, h.Telegram.Requests()}); diff != "" {
			t.Fatalf("attempts and platform calls (-want +got):\n%s", diff)
		}
	})
	t.Run("gave up", func(t *testing.T) {
		h := testkit.New(t, testkit.WithLimits(push.Limits{SendWindow: 2 * time.Second}))
		f := h.Seed(t)
		throttled429(h.Telegram, 100, 1)
		res, err := send(t, h, f, "", "never")
		if err != nil {
			t.Fatal(err)
		}
		j := h.WaitJob(t, res.Jobs[0].ID, push.StateFailed, 10*time.Second)
		calls := h.Telegram.Requests()
		if j.Attempts != calls || calls < 2 {
			t.Fatalf("%d attempts after %d platform calls, want them equal and at least 2", j.Attempts, calls)
		}
		if !strings.Contains(j.Error, "gave up after") || strings.Count(j.Error, "(code 429)") != 1 {
			t.Fatalf("error %q, want a give-up with (code 429) once", j.Error)
		}
	})
}

// TestParkedJobMovesOnlyFromItsWait: the store's claims of a job waiting
// to retry are compare-and-set: one claim wins, a job being sent cannot
// be parked twice, and a move that saw another wait is refused.
func TestParkedJobMovesOnlyFromItsWait(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}))
	f := h.Seed(t)
	res, err := send(t, h, f, "", "x")
	if err != nil {
		t.Fatal(err)
	}
	id := res.Jobs[0].ID
	now := time.Now().Truncate(time.Millisecond)
	if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.StateQueued, To: push.StateRunning, At: now}); err != nil {
		t.Fatal(err)
	}
	until := now.Add(time.Minute)
	if err := h.Store.ParkJob(ctx, id, until, now, "telegram: busy"); err != nil {
		t.Fatal(err)
	}
	var got []string
	outcome := func(err error) {
		switch {
		case err == nil:
			got = append(got, "ok")
		case push.ReasonOf(err) == push.ReasonStateChanged:
			got = append(got, "conflict")
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	outcome(h.Store.ParkJob(ctx, id, until, now, "again"))                                                         // parked already
	_, err = h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.StateRunning, To: push.StateSucceeded, At: now}) // saw it being sent
	outcome(err)
	j, err := h.Store.ResumeJob(ctx, id, until, now)
	outcome(err)
	_, err = h.Store.ResumeJob(ctx, id, until, now) // a second worker
	outcome(err)
	if diff := cmp.Diff([]string{"conflict", "conflict", "ok", "conflict"}, got); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	if j.Attempts != 2 || !j.RetryAt.IsZero() || j.State != push.StateRunning {
		t.Fatalf("resumed job: %d attempts, retry at %v, %s; want 2 attempts, no wait, running", j.Attempts, j.RetryAt, j.State)
	}
	if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.StateRunning, To: push.StateSucceeded, At: now}); err != nil {
		t.Fatal(err)
	}
}

// TestRetryWaitWithPacing: a paced platform's job that waits to retry
// while its request still waits is sent when due, within the request's
// synchronous wait (its send slot is claimed once per attempt).
func TestRetryWaitWithPacing(t *testing.T) {
	h := testkit.New(t, testkit.WithPacing())
	f := h.Seed(t)
	throttled429(h.Telegram, 1, 1)
	res, err := send(t, h, f, "", "paced")
	if err != nil {
		t.Fatal(err)
	}
	if j := res.Jobs[0]; j.State != push.StateSucceeded || j.Attempts != 2 {
		t.Fatalf("job %s after %d attempts (%s), want succeeded after 2 within the synchronous wait", j.State, j.Attempts, j.Error)
	}
}
