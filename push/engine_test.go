package push_test

import (
	"context"
	"fmt"
	"github.com/heraldpush/herald/internal/fake"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

func text(s string) push.Message { return push.Message{Type: push.MsgTypeText, Content: s} }

func send(t testing.TB, h *testkit.Herald, f testkit.Fixture, key, content string) (push.Result, error) {
	if t != nil {
		t.Helper()
	}
	return h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: text(content), IdempotencyKey: key})
}

func TestSendDelivers(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	res, err := send(t, h, f, "", "hello")
	if err != nil {
		t.Fatal(err)
	}
	j := res.Jobs[0]
	if j.State != push.StateSucceeded || j.PlatformIndex != f.Target.Address+":1" || j.Attempts != 1 {
		t.Fatalf("job = %+v, want succeeded with platform index %s:1 after 1 attempt", j, f.Target.Address)
	}
	msgs := h.Telegram.Messages()
	if len(msgs) != 1 || msgs[0].Text != "hello" || msgs[0].ChatID != f.Target.Address {
		t.Fatalf("platform received %+v", msgs)
	}
}

func TestJobMoves(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond}))
	f := h.Seed(t)
	newJob := func() push.Job {
		t.Helper()
		res, err := send(t, h, f, "", "x")
		if err != nil {
			t.Fatal(err)
		}
		return res.Jobs[0]
	}
	move := func(j push.Job, from, to push.State) error {
		_, err := h.Store.MoveJob(ctx, push.JobMove{ID: j.ID, From: from, To: to, At: time.Now()})
		return err
	}

	// The store's compare-and-set refuses a move from a state the job is not in.
	j := newJob()
	if err := move(j, push.StateRunning, push.StateSucceeded); push.ReasonOf(err) != push.ReasonStateChanged {
		t.Fatalf("move from a stale state = %v, want %s", err, push.ReasonStateChanged)
	}
	// Two concurrent claims of one job: exactly one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if move(j, push.StateQueued, push.StateRunning) == nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims won, want exactly 1", wins.Load())
	}

	// Cancel: queued → canceled; a second cancel and a cancel of a running
	// job are refused with Conflict.
	c := newJob()
	got, err := h.Engine.Jobs().Cancel(ctx, push.AccountPrincipal(f.Account.ID), c.ID)
	if err != nil || got.State != push.StateCanceled {
		t.Fatalf("Cancel = %v, %v", got.State, err)
	}
	for _, id := range []string{c.ID, j.ID} {
		if _, err := h.Engine.Jobs().Cancel(ctx, push.AccountPrincipal(f.Account.ID), id); push.KindOf(err) != push.Conflict || push.ReasonOf(err) != "job_not_queued" {
			t.Errorf("Cancel(%s) = %v, want Conflict job_not_queued", id, err)
		}
	}
	// Another account cannot cancel (or see) the job.
	other := h.Account(t, "other")
	if _, err := h.Engine.Jobs().Cancel(ctx, push.AccountPrincipal(other.ID), newJob().ID); push.KindOf(err) != push.NotFound {
		t.Errorf("Cancel by another account = %v, want NotFound", err)
	}

	// Resolve: only uncertain jobs, only to succeeded or failed.
	if _, err := h.Engine.Jobs().Resolve(ctx, push.System(), j.ID, push.StateSucceeded, ""); push.KindOf(err) != push.Conflict {
		t.Errorf("Resolve(running) = %v, want Conflict", err)
	}
	if err := move(j, push.StateRunning, push.StateUncertain); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Jobs().Resolve(ctx, push.System(), j.ID, push.StateCanceled, ""); push.KindOf(err) != push.Invalid {
		t.Errorf("Resolve(uncertain, canceled) = %v, want Invalid", err)
	}
	if r, err := h.Engine.Jobs().Resolve(ctx, push.System(), j.ID, push.StateSucceeded, ""); err != nil || r.State != push.StateSucceeded {
		t.Fatalf("Resolve(uncertain, succeeded) = %v, %v", r.State, err)
	}
	if _, err := h.Engine.Jobs().Resolve(ctx, push.System(), j.ID, push.StateFailed, ""); push.KindOf(err) != push.Conflict {
		t.Errorf("Resolve(succeeded) = %v, want Conflict", err)
	}
	// Final states accept no move at all, even from the store directly.
	for _, to := range []push.State{push.StateQueued, push.StateRunning, push.StateFailed, push.StateUncertain, push.StateCanceled} {
		if err := move(j, push.StateSucceeded, to); push.KindOf(err) != push.Conflict {
			t.Errorf("move succeeded → %s = %v, want Conflict", to, err)
		}
	}
	if got, _ := h.Engine.Jobs().Get(ctx, push.System(), j.ID); got.State != push.StateSucceeded {
		t.Fatalf("job %s after refused moves, want succeeded", got.State)
	}
}

func TestIdempotentConcurrentSends(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	const n = 200
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := send(t, h, f, "same-key", "exactly once")
			errs[i] = err
			if err == nil {
				ids[i] = res.Jobs[0].ID
			}
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if ids[i] != ids[0] {
			t.Fatalf("send %d got job %s, send 0 got %s", i, ids[i], ids[0])
		}
	}
	h.WaitJob(t, ids[0], push.StateSucceeded, 5*time.Second)
	if got := len(h.Telegram.Messages()); got != 1 {
		t.Fatalf("platform received %d messages, want 1", got)
	}
	if got := h.Balance(t, f.Account.ID); got != 99 {
		t.Fatalf("balance %d, want 99 (one charge)", got)
	}
	if got := h.CountJobs(t); got != 1 {
		t.Fatalf("%d jobs stored, want 1", got)
	}
}

func TestIdempotencyConflicts(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	first, err := send(t, h, f, "k", "one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, h, f, "k", "two"); push.KindOf(err) != push.Conflict || push.ReasonOf(err) != "idempotency_conflict" {
		t.Fatalf("same key, other content = %v, want Conflict idempotency_conflict", err)
	}
	_, err = h.Engine.SendBatch(ctx, push.AccountPrincipal(f.Account.ID), push.BatchRequest{BotID: f.Bot.ID, TargetIDs: []int64{f.Target.ID}, Message: text("one"), IdempotencyKey: "k"})
	if push.KindOf(err) != push.Conflict {
		t.Fatalf("same key for a batch = %v, want Conflict", err)
	}
	replay, err := send(t, h, f, "k", "one")
	if err != nil || !replay.Replayed || replay.Jobs[0].ID != first.Jobs[0].ID {
		t.Fatalf("replay = %+v, %v; want job %s replayed", replay, err, first.Jobs[0].ID)
	}
	// The key is scoped to the account: another account may use it.
	other := h.Account(t, "other")
	ob := h.TelegramBot(t, other.ID)
	ot := h.Target(t, ob.ID, push.TargetUser, "")
	res, err := h.Engine.Send(ctx, push.AccountPrincipal(other.ID), push.SendRequest{BotID: ob.ID, TargetID: ot.ID, Message: text("two"), IdempotencyKey: "k"})
	if err != nil || res.Replayed {
		t.Fatalf("another account's send with the same key = %+v, %v; want a new send", res, err)
	}
	if got := len(h.Telegram.Messages()); got != 2 {
		t.Fatalf("platform received %d messages, want 2", got)
	}
}

func TestPointsExactUnderConcurrency(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	if _, err := h.Engine.Ledger().SetBalance(ctx, push.System(), f.Account.ID, 10); err != nil {
		t.Fatal(err)
	}
	var accepted, refused atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := send(t, h, f, fmt.Sprintf("k%d", i), fmt.Sprintf("m%d", i))
			switch {
			case err == nil:
				accepted.Add(1)
			case push.ReasonOf(err) == "insufficient_points" && push.KindOf(err) == push.Invalid:
				refused.Add(1)
			default:
				t.Errorf("send %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if accepted.Load() != 10 || refused.Load() != 20 {
		t.Fatalf("accepted %d, refused %d; want 10 and 20", accepted.Load(), refused.Load())
	}
	if got := h.Balance(t, f.Account.ID); got != 0 {
		t.Fatalf("balance %d, want 0", got)
	}
	if got := h.CountJobs(t); got != 10 {
		t.Fatalf("%d jobs stored, want 10", got)
	}
	// A batch the balance cannot pay for in whole is refused in whole.
	if _, err := h.Engine.Ledger().SetBalance(ctx, push.System(), f.Account.ID, 1); err != nil {
		t.Fatal(err)
	}
	t2 := h.Target(t, f.Bot.ID, push.TargetUser, "")
	_, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(f.Account.ID), push.BatchRequest{BotID: f.Bot.ID, TargetIDs: []int64{f.Target.ID, t2.ID}, Message: text("b")})
	if push.ReasonOf(err) != "insufficient_points" {
		t.Fatalf("batch of 2 with 1 point = %v, want insufficient_points", err)
	}
	if got := h.Balance(t, f.Account.ID); got != 1 {
		t.Fatalf("balance %d after a refused batch, want 1", got)
	}
}

func TestSlowPlatformAnswers202ThenSucceeds(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond}))
	f := h.Seed(t)
	h.Telegram.SetDelay(400 * time.Millisecond)
	start := time.Now()
	res, err := send(t, h, f, "", "slow")
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 350*time.Millisecond {
		t.Fatalf("send took %s; the sync wait is 100ms", el)
	}
	if !res.Pending() {
		t.Fatalf("job %s after the sync wait, want pending", res.Jobs[0].State)
	}
	h.WaitJob(t, res.Jobs[0].ID, push.StateSucceeded, 5*time.Second)
}

func TestDroppedConnectionIsUncertain(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	h.Telegram.DropNext(1)
	res, err := send(t, h, f, "", "maybe")
	if err != nil {
		t.Fatal(err)
	}
	j := res.Jobs[0]
	if j.State != push.StateUncertain {
		t.Fatalf("job %s, want uncertain", j.State)
	}
	time.Sleep(200 * time.Millisecond) // a resend, if there were one, would arrive now
	if got := h.Telegram.Requests(); got != 1 {
		t.Fatalf("platform saw %d requests, want 1 (no resend)", got)
	}
	if got := h.Balance(t, f.Account.ID); got != 99 {
		t.Fatalf("balance %d, want 99 (no refund for uncertain)", got)
	}
}

func TestRetryableErrorIsRetried(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	h.Telegram.Fail(fake.TelegramFault{Status: 429, Description: "Too Many Requests: retry after 0", RetryAfter: 0})
	res, err := send(t, h, f, "", "again")
	if err != nil {
		t.Fatal(err)
	}
	if j := res.Jobs[0]; j.State != push.StateSucceeded {
		t.Fatalf("job %s (%s), want succeeded after a retry", j.State, j.Error)
	}
	if got := h.Telegram.Requests(); got != 2 {
		t.Fatalf("platform saw %d requests, want 2", got)
	}
}

func TestDefinitiveFailure(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	h.Telegram.Fail(fake.TelegramFault{Status: 403, Description: "Forbidden: bot was blocked by the user"})
	res, err := send(t, h, f, "", "blocked")
	if err != nil {
		t.Fatal(err)
	}
	j := res.Jobs[0]
	if j.State != push.StateFailed || j.Error != "telegram: Forbidden: bot was blocked by the user (code 403)" {
		t.Fatalf("job = %s %q", j.State, j.Error)
	}
	if got := h.Balance(t, f.Account.ID); got != 99 {
		t.Fatalf("balance %d, want 99: failed jobs are not refunded by default", got)
	}
}

func TestCancelRefundsOnce(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond}))
	f := h.Seed(t)
	res, err := send(t, h, f, "", "cancel me")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Balance(t, f.Account.ID); got != 99 {
		t.Fatalf("balance %d after the send, want 99", got)
	}
	id := res.Jobs[0].ID
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Engine.Jobs().Cancel(ctx, push.AccountPrincipal(f.Account.ID), id); err == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d cancels succeeded, want 1", ok.Load())
	}
	if got := h.Balance(t, f.Account.ID); got != 100 {
		t.Fatalf("balance %d after the cancel, want 100", got)
	}
	ledger, _ := h.Engine.Ledger().List(ctx, push.System(), push.LedgerFilter{AccountID: f.Account.ID})
	var refunds int
	for _, e := range ledger.Items {
		if e.Kind == push.LedgerRefund {
			refunds++
		}
	}
	if refunds != 1 {
		t.Fatalf("%d refund rows, want 1", refunds)
	}
	// A second refund of the same job is refused by the store itself.
	if again, err := h.Store.Refund(ctx, push.LedgerEntry{AccountID: f.Account.ID, JobID: id, Kind: push.LedgerRefund, Amount: 1}); again || err != nil {
		t.Fatalf("second refund = %v, %v; want false, nil", again, err)
	}
	if err := h.Engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got := len(h.Telegram.Messages()); got != 0 {
		t.Fatalf("a canceled job was sent %d times", got)
	}
}

func TestBacklogExact(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 50 * time.Millisecond, RatePerMinute: -1}))
	f := h.Seed(t)
	h.Telegram.Block()
	defer h.Telegram.Unblock()
	var accepted, refused atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := send(t, h, f, "", fmt.Sprintf("m%d", i))
			switch {
			case err == nil:
				accepted.Add(1)
			case push.KindOf(err) == push.TooMany && push.ReasonOf(err) == "backlog_full" && push.RetryAfterOf(err) > 0:
				refused.Add(1)
			default:
				t.Errorf("send %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if accepted.Load() != 100 || refused.Load() != 200 {
		t.Fatalf("accepted %d, refused %d; want 100 and 200", accepted.Load(), refused.Load())
	}
	if n, _ := h.Store.Backlog(ctx, f.Bot.ID); n != 100 {
		t.Fatalf("backlog counter %d, want 100", n)
	}
	h.Telegram.Unblock()
	deadline := time.Now().Add(10 * time.Second)
	for len(h.Telegram.Messages()) < 100 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The counter drops in each job's final move, just after the platform
	// answered: wait for the last of them.
	n := -1
	for time.Now().Before(deadline) {
		if n, _ = h.Store.Backlog(ctx, 0); n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n != 0 {
		t.Fatalf("total backlog %d after delivery, want 0", n)
	}
	if got := len(h.Telegram.Messages()); got != 100 {
		t.Fatalf("platform received %d, want 100", got)
	}
	// Room again: a new send is accepted.
	if _, err := send(t, h, f, "", "after"); err != nil {
		t.Fatalf("send after the backlog drained: %v", err)
	}
}

func TestBacklogTotalAcrossBots(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond, BacklogPerBot: 30, BacklogTotal: 50, RatePerMinute: -1}))
	a := h.Account(t, "a")
	var bots []push.Bot
	var targets []push.Target
	for i := 0; i < 3; i++ {
		b := h.TelegramBot(t, a.ID)
		bots = append(bots, b)
		targets = append(targets, h.Target(t, b.ID, push.TargetUser, ""))
	}
	var accepted atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 120; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b := i % 3
			_, err := h.Engine.Send(ctx, push.AccountPrincipal(a.ID), push.SendRequest{BotID: bots[b].ID, TargetID: targets[b].ID, Message: text(fmt.Sprint(i))})
			if err == nil {
				accepted.Add(1)
			} else if push.ReasonOf(err) != "backlog_full" {
				t.Errorf("send %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if accepted.Load() != 50 {
		t.Fatalf("accepted %d, want 50 (the total limit)", accepted.Load())
	}
	for _, b := range bots {
		if n, _ := h.Store.Backlog(ctx, b.ID); n > 30 {
			t.Fatalf("bot %d backlog %d, over its limit 30", b.ID, n)
		}
	}
}

func TestRestartRecoversJobs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "herald.db")
	tg := fake.NewTelegram(t)
	first := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), testkit.WithoutStart(),
		testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}), testkit.WithPoints(push.Points{Enabled: true}))
	f := first.Seed(t)
	var ids []string
	for i := 0; i < 3; i++ {
		res, err := send(t, first, f, "", fmt.Sprintf("m%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Jobs[0].ID)
	}
	// The first job was being sent when the process died.
	if _, err := first.Store.MoveJob(ctx, push.JobMove{ID: ids[0], From: push.StateQueued, To: push.StateRunning, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	first.Stop()

	second := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), testkit.WithPoints(push.Points{Enabled: true}))
	if j := second.WaitJob(t, ids[0], push.StateUncertain, 5*time.Second); j.Error == "" {
		t.Fatal("an orphaned job became uncertain without a reason")
	}
	second.WaitJob(t, ids[1], push.StateSucceeded, 5*time.Second)
	second.WaitJob(t, ids[2], push.StateSucceeded, 5*time.Second)
	var texts []string
	for _, m := range tg.Messages() {
		texts = append(texts, m.Text)
	}
	slices.Sort(texts) // several workers: any order
	if diff := cmp.Diff([]string{"m1", "m2"}, texts); diff != "" {
		t.Fatalf("platform received (-want +got):\n%s", diff)
	}
	if got := second.Balance(t, f.Account.ID); got != 97 {
		t.Fatalf("balance %d, want 97: uncertain jobs are not refunded", got)
	}
	if n, _ := second.Store.Backlog(ctx, 0); n != 0 {
		t.Fatalf("backlog %d after recovery, want 0", n)
	}
}

func TestQueueWaitExpires(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}))
	f := h.Seed(t)
	swept, err := send(t, h, f, "", "late")
	if err != nil {
		t.Fatal(err)
	}
	dequeued, err := send(t, h, f, "", "later")
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(59 * time.Minute)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := h.Engine.Jobs().Get(ctx, push.System(), swept.Jobs[0].ID); j.State != push.StateQueued {
		t.Fatalf("job %s before the queue-wait limit, want queued", j.State)
	}
	h.Clock.Advance(2 * time.Minute)
	// One job expires in the sweeper, the other when a worker dequeues it.
	ids, _ := h.Store.FindJobs(ctx, push.StateQueued, h.Clock.Now(), 1)
	if len(ids) != 1 || ids[0] != swept.Jobs[0].ID {
		t.Fatalf("FindJobs(expired, limit 1) = %v", ids)
	}
	if err := h.Engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h.WaitJob(t, dequeued.Jobs[0].ID, push.StateExpired, 5*time.Second)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	h.WaitJob(t, swept.Jobs[0].ID, push.StateExpired, 5*time.Second)
	if got := h.Balance(t, f.Account.ID); got != 100 {
		t.Fatalf("balance %d, want 100: expired jobs are refunded", got)
	}
	for _, id := range []string{dequeued.Jobs[0].ID, swept.Jobs[0].ID} {
		j, _ := h.Engine.Jobs().Get(ctx, push.System(), id)
		if want := "not started within the queue-wait limit of 1h0m0s; points returned"; j.Error != want {
			t.Errorf("expired job's error %q, want %q", j.Error, want)
		}
	}
	if got := len(h.Telegram.Messages()); got != 0 {
		t.Fatalf("expired jobs were sent %d times", got)
	}
}

// TestQueueWaitExpiresOnTime: a job no worker takes expires within
// moments of its queue-wait limit, also when the limit is shorter than
// the sweep interval, and its points are returned.
func TestQueueWaitExpiresOnTime(t *testing.T) {
	for _, wait := range []time.Duration{2 * time.Second, 4 * time.Second} {
		t.Run(wait.String(), func(t *testing.T) {
			h := testkit.New(t, testkit.WithWorkers(1), testkit.WithPoints(push.Points{Enabled: true}),
				testkit.WithLimits(push.Limits{SyncWait: time.Millisecond, QueueWait: wait}),
				testkit.WithEngineOptions(func(o *push.Options) { o.SweepInterval = 30 * time.Second }))
			f := h.Seed(t)
			// The one worker is busy with a send the platform holds.
			h.Telegram.Block()
			t.Cleanup(h.Telegram.Unblock)
			if _, err := send(t, h, f, "", "holds the worker"); err != nil {
				t.Fatal(err)
			}
			<-h.Telegram.Arrived()
			sent := time.Now()
			res, err := send(t, h, f, "", "nobody takes it")
			if err != nil {
				t.Fatal(err)
			}
			j := h.WaitJob(t, res.Jobs[0].ID, push.StateExpired, wait+5*time.Second)
			took := time.Since(sent)
			t.Logf("expired %s after it was sent (limit %s)", took.Round(time.Millisecond), wait)
			if took < wait || took > wait+2*time.Second {
				t.Errorf("expired %s after it was sent, want within 2s after the limit of %s", took, wait)
			}
			if want := fmt.Sprintf("not started within the queue-wait limit of %s; points returned", wait); j.Error != want {
				t.Errorf("error %q, want %q", j.Error, want)
			}
			if got := h.Balance(t, f.Account.ID); got != 99 {
				t.Errorf("balance %d, want 99 (the expired job refunded, the held one charged)", got)
			}
		})
	}
}

func TestIdempotencyRecordsExpireAfter30Days(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	if _, err := send(t, h, f, "old", "x"); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(29 * 24 * time.Hour)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Jobs().ByIdempotencyKey(ctx, push.AccountPrincipal(f.Account.ID), "old"); err != nil {
		t.Fatalf("record gone after 29 days: %v", err)
	}
	h.Clock.Advance(2 * 24 * time.Hour)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Jobs().ByIdempotencyKey(ctx, push.AccountPrincipal(f.Account.ID), "old"); push.KindOf(err) != push.NotFound {
		t.Fatalf("record after 31 days: %v, want NotFound", err)
	}
	// The key can now be used again (a new message).
	res, err := send(t, h, f, "old", "y")
	if err != nil || res.Replayed {
		t.Fatalf("reuse of an expired key = %+v, %v", res, err)
	}
}

func TestDrainRefusesSends(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	h.Engine.Drain()
	_, err := send(t, h, f, "k", "x")
	if push.KindOf(err) != push.Unavailable || push.RetryAfterOf(err) <= 0 {
		t.Fatalf("send while draining = %v, want Unavailable with a retry hint", err)
	}
	if h.CountJobs(t) != 0 {
		t.Fatal("a refused send stored a job")
	}
}

func TestSyncWaitDefaultIsEightSeconds(t *testing.T) {
	t.Parallel()
	h := testkit.New(t)
	if got := h.Engine.Limits().SyncWait; got != 8*time.Second {
		t.Fatalf("default sync wait %s, want 8s", got)
	}
	f := h.Seed(t)
	h.Telegram.SetDelay(9 * time.Second)
	start := time.Now()
	res, err := send(t, h, f, "", "eight")
	el := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pending() || el < 8*time.Second || el > 8700*time.Millisecond {
		t.Fatalf("answered after %s with %s; want pending after 8s", el, res.Jobs[0].State)
	}
	h.WaitJob(t, res.Jobs[0].ID, push.StateSucceeded, 5*time.Second)
}

// TestReconcileSettlesStaleJobsAndRecounts: in shared mode, a job running
// for longer than any live worker takes (send window 1 min + one platform
// call 30 s + 1 min) is made uncertain by the reconciler, one that is not
// is left alone, and backlog counters that drifted are recounted.
func TestReconcileSettlesStaleJobsAndRecounts(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}),
		testkit.WithEngineOptions(func(o *push.Options) { o.Shared = true }))
	f := h.Seed(t)
	var ids []string
	for i := 0; i < 2; i++ {
		res, err := send(t, h, f, "", fmt.Sprintf("m%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Jobs[0].ID)
	}
	start := func(id string) {
		t.Helper()
		if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.StateQueued, To: push.StateRunning, At: h.Clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	start(ids[0]) // its worker dies; the queue lost its task
	h.Clock.Advance(time.Minute)
	start(ids[1]) // a slow, live worker
	h.Clock.Advance(89 * time.Second)
	if err := h.Engine.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if j, _ := h.Engine.Jobs().Get(ctx, push.System(), id); j.State != push.StateRunning {
			t.Fatalf("job %s is %s after 2m29s at most, want still running", id, j.State)
		}
	}
	h.Clock.Advance(2 * time.Second)
	if err := h.Engine.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := h.Engine.Jobs().Get(ctx, push.System(), ids[0]); j.State != push.StateUncertain || j.Error == "" {
		t.Fatalf("stale job: %s %q, want uncertain with a reason", j.State, j.Error)
	}
	if j, _ := h.Engine.Jobs().Get(ctx, push.System(), ids[1]); j.State != push.StateRunning {
		t.Fatalf("live job: %s, want running", j.State)
	}
	if got := h.Balance(t, f.Account.ID); got != 98 {
		t.Fatalf("balance %d, want 98: uncertain jobs are not refunded", got)
	}
	if n, _ := h.Store.Backlog(ctx, f.Bot.ID); n != 1 {
		t.Fatalf("bot backlog %d, want 1", n)
	}
	// Counters edited behind the engine's back are recounted from the jobs.
	if _, err := h.Store.DB().NewUpdate().Table("backlog").Set("n = 42").Where("n >= 0").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Engine.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, bot := range []int64{0, f.Bot.ID} {
		if n, _ := h.Store.Backlog(ctx, bot); n != 1 {
			t.Fatalf("backlog of %d after the recount = %d, want 1", bot, n)
		}
	}
	if got := h.Telegram.Requests(); got != 0 {
		t.Fatalf("the reconciler sent %d messages", got)
	}
}
