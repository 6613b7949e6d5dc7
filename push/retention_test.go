package push_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

const day = 24 * time.Hour

// ledgerRow is what a test compares of a ledger entry.
type ledgerRow struct {
	Kind   push.LedgerKind
	Amount int64
}

// ledgerOf returns an account's whole ledger, newest first, and checks
// that it sums to the balance.
func ledgerOf(t *testing.T, h *testkit.Herald, accountID int64) []ledgerRow {
	t.Helper()
	var rows []ledgerRow
	var sum int64
	f := push.LedgerFilter{AccountID: accountID, Limit: push.MaxPageSize}
	for {
		page, err := h.Engine.Ledger().List(ctx, push.System(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Items {
			rows = append(rows, ledgerRow{e.Kind, e.Amount})
			sum += e.Amount
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	if b := h.Balance(t, accountID); sum != b {
		t.Fatalf("the ledger sums to %d, the balance is %d: %+v", sum, b, rows)
	}
	return rows
}

// TestJobRetention: jobs that ended for good go once they are older than
// the retention, uncertain ones stay until resolved; their charges and
// refunds become one summary row of the month, the ledger still sums to
// the balance, and a later deletion in the same month adds to that row.
func TestJobRetention(t *testing.T) {
	h := testkit.New(t, testkit.WithWorkers(1), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond}))
	f := h.Seed(t)
	p := push.AccountPrincipal(f.Account.ID)

	delivered, err := send(t, h, f, "delivered", "delivered")
	if err != nil {
		t.Fatal(err)
	}
	h.WaitJob(t, delivered.Jobs[0].ID, push.StateSucceeded, 5*time.Second)
	h.Telegram.DropNext(1)
	uncertain, err := send(t, h, f, "", "maybe")
	if err != nil {
		t.Fatal(err)
	}
	h.WaitJob(t, uncertain.Jobs[0].ID, push.StateUncertain, 5*time.Second)
	// A canceled job, refunded: the one worker is held by another send.
	h.Telegram.Block()
	held, err := send(t, h, f, "", "held")
	if err != nil {
		t.Fatal(err)
	}
	<-h.Telegram.Arrived()
	queued, err := send(t, h, f, "", "canceled")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Jobs().Cancel(ctx, p, queued.Jobs[0].ID); err != nil {
		t.Fatal(err)
	}
	h.Telegram.Unblock()
	h.WaitJob(t, held.Jobs[0].ID, push.StateSucceeded, 5*time.Second)
	ended := []string{delivered.Jobs[0].ID, held.Jobs[0].ID, queued.Jobs[0].ID}
	kept := uncertain.Jobs[0].ID

	before := ledgerOf(t, h, f.Account.ID)
	if len(before) != 6 { // initial, 4 charges, 1 refund
		t.Fatalf("ledger before: %+v", before)
	}

	h.Clock.Advance(89 * day)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range append(ended, kept) {
		if _, err := h.Engine.Jobs().Get(ctx, p, id); err != nil {
			t.Fatalf("job %s after 89 days: %v", id, err)
		}
	}

	h.Clock.Advance(2 * day)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ended {
		if _, err := h.Engine.Jobs().Get(ctx, p, id); push.KindOf(err) != push.NotFound || !strings.Contains(err.Error(), "deleted after the job retention") {
			t.Errorf("job %s after 91 days: %v, want NotFound saying why", id, err)
		}
	}
	if j, err := h.Engine.Jobs().Get(ctx, p, kept); err != nil || j.State != push.StateUncertain {
		t.Fatalf("uncertain job after 91 days = %+v, %v; it waits to be resolved", j, err)
	}
	want := []ledgerRow{{push.LedgerCharge, -1}, {push.LedgerSummary, -2}, {push.LedgerInitial, 100}}
	if diff := cmp.Diff(want, ledgerOf(t, h, f.Account.ID)); diff != "" {
		t.Fatalf("ledger after the retention (-want +got):\n%s", diff)
	}

	// Resolved, the uncertain job ends for good and goes after the
	// retention too: its charge joins the same month's summary.
	if _, err := h.Engine.Jobs().Resolve(ctx, push.System(), kept, push.StateSucceeded, "seen in the chat"); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(91 * day)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Jobs().Get(ctx, p, kept); push.KindOf(err) != push.NotFound {
		t.Fatalf("resolved job after the retention: %v, want NotFound", err)
	}
	want = []ledgerRow{{push.LedgerSummary, -3}, {push.LedgerInitial, 100}}
	if diff := cmp.Diff(want, ledgerOf(t, h, f.Account.ID)); diff != "" {
		t.Fatalf("ledger after the second deletion (-want +got):\n%s", diff)
	}
	page, err := h.Engine.Ledger().List(ctx, push.System(), push.LedgerFilter{AccountID: f.Account.ID})
	if err != nil {
		t.Fatal(err)
	}
	if s := page.Items[0]; s.At.Day() != 1 || s.JobID != "" || !strings.Contains(s.Note, "summed when the jobs were deleted") {
		t.Errorf("summary row = %+v: want the month's first day, no job, a note that says what it is", s)
	}

	// Sending goes on as before.
	res, err := send(t, h, f, "", "after")
	if err != nil {
		t.Fatal(err)
	}
	h.WaitJob(t, res.Jobs[0].ID, push.StateSucceeded, 5*time.Second)
	ledgerOf(t, h, f.Account.ID)
}

// TestJobRetentionForever: a negative retention keeps every job.
func TestJobRetentionForever(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{JobRetention: -1}))
	f := h.Seed(t)
	res, err := send(t, h, f, "", "kept")
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(3650 * day)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Jobs().Get(ctx, push.System(), res.Jobs[0].ID); err != nil {
		t.Fatalf("job after ten years with retention off: %v", err)
	}
}

// TestJobRetentionShorterThanIdempotency: an engine refuses a job
// retention that would delete the jobs of a request its idempotency
// record can still replay.
func TestJobRetentionShorterThanIdempotency(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart())
	_, err := push.New(push.Options{Store: h.Store, Queue: h.Queue, Limits: push.Limits{JobRetention: 29 * day}})
	if err == nil || !strings.Contains(err.Error(), "shorter than the idempotency records'") {
		t.Fatalf("New with a 29-day job retention: %v, want a refusal", err)
	}
}

// TestPruneJobsConcurrently: pruners running at once (nodes sharing a
// database, each with its own transactions) delete every old job once and
// count each ledger row in one summary once.
func TestPruneJobsConcurrently(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true, Initial: 1000}))
	f := h.Seed(t)
	const jobs = 60
	for i := range jobs {
		if res, err := send(t, h, f, "", "job"); err != nil || res.Jobs[0].State != push.StateSucceeded {
			t.Fatalf("send %d = %+v, %v", i, res, err)
		}
	}
	h.Clock.Advance(91 * day)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		errs  []error
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := h.Store.PruneJobs(ctx, h.Clock.Now().Add(-90*day), 7)
				mu.Lock()
				total += n
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil || n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if total != jobs || h.CountJobs(t) != 0 {
		t.Fatalf("pruners deleted %d jobs, %d left; want %d and none", total, h.CountJobs(t), jobs)
	}
	rows := ledgerOf(t, h, f.Account.ID)
	var summed int64
	for _, r := range rows {
		if r.Kind == push.LedgerSummary {
			summed += r.Amount
		}
	}
	if summed != -jobs {
		t.Fatalf("summaries hold %d, want %d: %+v", summed, -jobs, rows)
	}
}

// TestRetentionKeepsTheFileSize: under a steady load with the clock
// moving past the retention, a SQLite database stops growing: the deleted
// jobs' pages are given back (incremental auto-vacuum) or reused.
func TestRetentionKeepsTheFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herald.db")
	h := testkit.New(t, testkit.WithBackend(testkit.SQLite), testkit.WithDB(path), testkit.WithPoints(push.Points{Enabled: true, Initial: 1 << 40}),
		testkit.WithLimits(push.Limits{IdempotencyTTL: day, JobRetention: 3 * day}))
	f := h.Seed(t)
	pragma := func(name string) int64 {
		t.Helper()
		var n int64
		if err := h.Store.DB().QueryRowContext(context.Background(), "PRAGMA "+name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := pragma("auto_vacuum"); got != 2 {
		t.Fatalf("auto_vacuum = %d, want 2 (incremental) in a new database", got)
	}
	content := strings.Repeat("retention ", 190)
	var pages []int64
	for round := range 7 {
		for i := range 120 {
			if res, err := send(t, h, f, "", content); err != nil || res.Jobs[0].State != push.StateSucceeded {
				t.Fatalf("round %d send %d = %+v, %v", round, i, res, err)
			}
		}
		h.Clock.Advance(day)
		if err := h.Engine.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, pragma("page_count"))
	}
	t.Logf("pages after each day: %v (free: %d)", pages, pragma("freelist_count"))
	// A day's sends take 56 pages of 4 KB: the second day's add to the
	// first's; from the third on, each day deletes what an earlier one
	// added (the jobs of the last two days are kept).
	if pages[1] < pages[0]+40 {
		t.Fatalf("pages %v: the load did not grow the database before the retention", pages)
	}
	if last, steady := pages[len(pages)-1], pages[2]; float64(last) > 1.1*float64(steady) {
		t.Fatalf("pages %v: the database kept growing under a steady load (%d → %d)", pages, steady, last)
	}
	if jobs := h.CountJobs(t); jobs != 2*120 {
		t.Fatalf("%d jobs kept, want the last 2 days' (%d)", jobs, 2*120)
	}
	ledgerOf(t, h, f.Account.ID)
}
