package storage_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// TestUpdateIsolatesEachTransaction: many concurrent Updates, committed
// together (a savepoint each), some failing after they wrote:
// a failed one leaves nothing behind, the others are all there, and the
// balance and ledger count exactly the successful charges.
func TestUpdateIsolatesEachTransaction(t *testing.T) {
	eachCommitMode(t, func(t *testing.T, dsn string, calm bool) {
		s, a, b, tg := openSeeded(t, dsn, calm, 1000)
		errBoom := errors.New("boom")
		const n = 90
		type outcome struct {
			kind int // 0 succeeds, 1 fails after writing, 2 races another for one key
			key  string
			job  *push.Job
			err  error
		}
		out := make([]outcome, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range out {
			o := &out[i]
			o.kind = i % 3
			o.key = fmt.Sprint("ok-", i)
			switch o.kind {
			case 1:
				o.key = fmt.Sprint("fail-", i)
			case 2:
				o.key = fmt.Sprint("dup-", i/6) // two transactions per key
			}
			o.job = newJob(a, b, tg, fmt.Sprint("message ", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				o.err = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
					if err := tx.CreateJobs(ctx, []*push.Job{o.job}); err != nil {
						return err
					}
					charge := []push.LedgerEntry{{AccountID: a.ID, JobID: o.job.ID, Kind: push.LedgerCharge, Amount: -1, At: t0}}
					if err := tx.Charge(ctx, a.ID, charge); err != nil {
						return err
					}
					rec := &push.IdempotencyRecord{AccountID: a.ID, Key: o.key, Kind: push.RequestKindSingle, Fingerprint: "f", JobIDs: []string{o.job.ID}, CreatedAt: t0}
					if err := tx.CreateIdempotency(ctx, rec); err != nil {
						return err
					}
					if o.kind == 1 {
						return errBoom
					}
					return nil
				})
			}()
		}
		close(start)
		wg.Wait()

		succeeded := 0
		dupWins := map[string]int{}
		for i, o := range out {
			_, jerr := s.Job(ctx, o.job.ID)
			_, rerr := s.Idempotency(ctx, a.ID, o.key)
			switch {
			case o.err == nil:
				succeeded++
				if o.kind == 1 {
					t.Fatalf("transaction %d returned an error and still committed", i)
				}
				if jerr != nil || rerr != nil {
					t.Errorf("transaction %d committed, but its job (%v) or record (%v) is missing", i, jerr, rerr)
				}
				if o.kind == 2 {
					dupWins[o.key]++
				}
			case o.kind == 1 && errors.Is(o.err, errBoom), o.kind == 2 && push.ReasonOf(o.err) == push.ReasonDuplicate:
				if push.KindOf(jerr) != push.NotFound {
					t.Errorf("transaction %d failed (%v), but its job was written (%v)", i, o.err, jerr)
				}
				if o.kind == 1 && push.KindOf(rerr) != push.NotFound {
					t.Errorf("transaction %d failed, but its idempotency record was written (%v)", i, rerr)
				}
			default:
				t.Errorf("transaction %d (kind %d): %v", i, o.kind, o.err)
			}
		}
		for k, wins := range dupWins {
			if wins != 1 {
				t.Errorf("key %s: %d transactions committed it, want 1", k, wins)
			}
		}
		if len(dupWins) != n/6 {
			t.Errorf("%d raced keys committed, want %d", len(dupWins), n/6)
		}
		if acc, _ := s.Account(ctx, a.ID); acc.Points != 1000-int64(succeeded) {
			t.Errorf("balance %d after %d charges of 1 from 1000", acc.Points, succeeded)
		}
		if l, _ := s.Ledger(ctx, push.LedgerFilter{AccountID: a.ID}); len(l) != succeeded {
			t.Errorf("%d ledger entries, want %d", len(l), succeeded)
		}
		if storage.GroupedTransactions(s) == 0 {
			t.Errorf("no transaction was committed together with another: the group commit was not exercised")
		}
		if calm && storage.RedoneBatches(s) == 0 {
			t.Errorf("no batch run without savepoints was rolled back and run again: that path was not exercised")
		}
	})
}

// eachCommitMode runs test on each backend and once more with the
// committer starting calm: its batches run without savepoints until a
// function fails.
func eachCommitMode(t *testing.T, test func(t *testing.T, dsn string, calm bool)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.dsn(t), false)
			t.Run("calm", func(t *testing.T) {
				test(t, b.dsn(t), true)
			})
		})
	}
}

// openSeeded opens the store of dsn, seeds it (an account with points, a
// bot, a target) and, with calm, makes its committer start calm.
func openSeeded(t *testing.T, dsn string, calm bool, points int64) (*storage.Store, push.Account, push.Bot, push.Target) {
	t.Helper()
	s := open(t, dsn)
	a, b, tg := seed(t, s, points)
	if calm {
		storage.Calm(s)
	}
	return s, a, b, tg
}

// TestCalmBatchesCommitEverything: batches run without savepoints commit
// every transaction in them when none fails.
func TestCalmBatchesCommitEverything(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "herald.db"))
	a, b, tg := seed(t, s, 0)
	storage.Calm(s)
	jobs := make([]*push.Job, 60)
	for i := range jobs {
		jobs[i] = newJob(a, b, tg, fmt.Sprint("m", i))
	}
	none := func(error) bool { return false }
	race(t, len(jobs), func(i int) error {
		return s.Update(ctx, func(ctx context.Context, tx push.Tx) error { return tx.CreateJobs(ctx, []*push.Job{jobs[i]}) })
	}, none)
	for i, j := range jobs {
		if _, err := s.Job(ctx, j.ID); err != nil {
			t.Errorf("transaction %d committed, but its job: %v", i, err)
		}
	}
	if storage.BareTransactions(s) == 0 {
		t.Errorf("no transaction was committed in a batch without savepoints: that path was not exercised")
	}
}

// TestBacklogReserveReleaseDoNotDeadlock: reservations (one bot, or two)
// and releases racing on the same counters take their row locks in one
// order, so no transaction is ever aborted as a deadlock victim, and the
// counters end where they began.
func TestBacklogReserveReleaseDoNotDeadlock(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		bots := []int64{21, 22, 23}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := 0; g < 40; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 5; i++ {
					perBot := map[int64]int{bots[(g+i)%3]: 1}
					if g%4 == 0 {
						perBot[bots[(g+i+1)%3]] = 1
					}
					err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
						return tx.ReserveBacklog(ctx, perBot, 1000, 1000)
					})
					for bot, n := range perBot {
						if err != nil {
							break
						}
						err = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
							return tx.ReleaseBacklog(ctx, bot, n)
						})
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("reserve or release: %v", err)
		}
		for _, bot := range append([]int64{0}, bots...) {
			if n, err := s.Backlog(ctx, bot); n != 0 || err != nil {
				t.Errorf("counter of bot %d is %d (%v) after as many releases as reservations", bot, n, err)
			}
		}
		if n := storage.RetriedTransactions(s); n != 0 {
			t.Errorf("%d transactions were aborted and run again (deadlocks)", n)
		}
	})
}

// TestUpdatePanicStaysWithItsCaller: a transaction function that panics
// panics in its caller's goroutine, as it would without the group commit;
// its writes are rolled back and the transactions committed with it are
// not disturbed.
func TestUpdatePanicStaysWithItsCaller(t *testing.T) {
	eachCommitMode(t, func(t *testing.T, dsn string, calm bool) {
		s, a, b, tg := openSeeded(t, dsn, calm, 0)
		jobs := make([]*push.Job, 20)
		panicked := make([]any, len(jobs))
		errs := make([]error, len(jobs))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range jobs {
			jobs[i] = newJob(a, b, tg, fmt.Sprint("m", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { panicked[i] = recover() }()
				<-start
				errs[i] = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
					if err := tx.CreateJobs(ctx, []*push.Job{jobs[i]}); err != nil {
						return err
					}
					if i%5 == 0 {
						panic(fmt.Sprint("bug in transaction ", i))
					}
					return nil
				})
			}()
		}
		close(start)
		wg.Wait()
		for i, j := range jobs {
			_, err := s.Job(ctx, j.ID)
			if i%5 == 0 {
				if panicked[i] != fmt.Sprint("bug in transaction ", i) {
					t.Errorf("transaction %d: the caller saw %v, not its panic", i, panicked[i])
				}
				if push.KindOf(err) != push.NotFound {
					t.Errorf("transaction %d panicked, but its job was written (%v)", i, err)
				}
				continue
			}
			if panicked[i] != nil || errs[i] != nil || err != nil {
				t.Errorf("transaction %d: panic %v, error %v, job %v", i, panicked[i], errs[i], err)
			}
		}
		if storage.GroupedTransactions(s) == 0 {
			t.Errorf("no transaction was committed together with another: the group commit was not exercised")
		}
		if calm && storage.RedoneBatches(s) == 0 {
			t.Errorf("no batch run without savepoints was rolled back and run again: that path was not exercised")
		}
	})
}

// TestBatchedBacklogKeepsLimits: the backlog changes of transactions
// committed together are made once per batch, checked against the limits
// together; when they do not fit, the batch runs again with each
// transaction counting its own, so exactly as many reservations succeed
// as the limit allows and each refused one is refused alone, with the
// backlog's own answer. A closed counter (a deleted bot) refuses the
// reservations made in a batch as it refuses one alone.
func TestBatchedBacklogKeepsLimits(t *testing.T) {
	eachCommitMode(t, func(t *testing.T, dsn string, calm bool) {
		s := open(t, dsn)
		if calm {
			storage.Calm(s)
		}
		const bot, gone, n, limit = 31, 32, 60, 25
		// Counters exist from a first reservation; the gone bot's closes.
		for _, b := range []int64{bot, gone} {
			if err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				return tx.ReserveBacklog(ctx, map[int64]int{b: 1}, 1000, 1000)
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error { return tx.ReleaseBacklog(ctx, b, 1) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := storage.CloseBacklog(ctx, s, gone); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, n)
		race(t, n, func(i int) error {
			b := int64(bot)
			if i%10 == 9 {
				b = gone
			}
			errs[i] = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				return tx.ReserveBacklog(ctx, map[int64]int{b: 1}, limit, 1000)
			})
			return nil
		}, func(error) bool { return false })
		ok, full, notFound := 0, 0, 0
		for i, err := range errs {
			switch {
			case err == nil && i%10 != 9:
				ok++
			case i%10 == 9 && push.KindOf(err) == push.NotFound:
				notFound++
			case i%10 != 9 && push.ReasonOf(err) == "backlog_full":
				full++
			default:
				t.Errorf("reservation %d: %v", i, err)
			}
		}
		if ok != limit || full != n-n/10-limit || notFound != n/10 {
			t.Errorf("%d reserved, %d refused as full, %d as a gone bot; want %d, %d and %d", ok, full, notFound, limit, n-n/10-limit, n/10)
		}
		for _, c := range []struct{ bot, want int64 }{{0, limit}, {bot, limit}, {gone, 0}} {
			if got, err := s.Backlog(ctx, c.bot); int64(got) != c.want || err != nil {
				t.Errorf("counter of bot %d: %d (%v), want %d", c.bot, got, err, c.want)
			}
		}
		// A batch whose reservations did not fit together ran again: the
		// batched backlog was exercised. (Whether any batch then committed
		// together depends on timing: a batch run again whose reservations
		// meet the limit while other transactions take the last room runs
		// its transactions alone, as both of a run's batches did once.)
		if storage.UnfitBatches(s) == 0 {
			t.Errorf("%d transactions committed together, %d batches run again: the batched backlog was not exercised",
				storage.GroupedTransactions(s), storage.UnfitBatches(s))
		}
	})
}

// TestBatchedMovesStayExact: moves of jobs whose state the mover knew are
// written together at the end of their batch, and each is still checked
// there: of several workers racing to claim one job (a queue delivering
// it more than once), exactly one claims it and the others learn that its
// state changed, as they would with a transaction of their own; the
// claimed jobs are running, with one attempt each, and their outcomes
// recorded the same way are all there.
func TestBatchedMovesStayExact(t *testing.T) {
	eachCommitMode(t, func(t *testing.T, dsn string, calm bool) {
		s, a, b, tg := openSeeded(t, dsn, calm, 0)
		const jobs, racers = 30, 3
		js := make([]*push.Job, jobs)
		for i := range js {
			js[i] = newJob(a, b, tg, fmt.Sprint("m", i))
		}
		createJobs(t, s, js...)
		at := t0.Add(time.Second)
		won := race(t, jobs*racers, func(i int) error {
			j := *js[i%jobs]
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				_, err := tx.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateQueued, To: push.StateRunning, At: at, Job: &j})
				return err
			})
		}, refused(push.Conflict, push.ReasonStateChanged))
		claims := make([]int, jobs)
		for i, w := range won {
			if w {
				claims[i%jobs]++
			}
		}
		for i, n := range claims {
			if n != 1 {
				t.Errorf("job %d claimed %d times, want once", i, n)
			}
		}
		race(t, jobs, func(i int) error {
			j, err := s.Job(ctx, js[i].ID)
			if err != nil {
				return err
			}
			if j.State != push.StateRunning || j.Attempts != 1 || !j.StartedAt.Equal(at) {
				t.Errorf("job %d after its claim: %s, %d attempts, started %v", i, j.State, j.Attempts, j.StartedAt)
			}
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				_, err := tx.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateRunning, To: push.StateSucceeded, At: at, PlatformIndex: fmt.Sprint("p", i), Job: &j})
				return err
			})
		}, func(error) bool { return false })
		for i, j := range js {
			got, err := s.Job(ctx, j.ID)
			if err != nil || got.State != push.StateSucceeded || got.PlatformIndex != fmt.Sprint("p", i) || !got.FinishedAt.Equal(at) || got.Attempts != 1 {
				t.Errorf("job %d after its outcome: %+v, %v", i, got, err)
			}
		}
	})
}

// TestBatchedRequestsStayExact: new requests made by the transactions of
// one batch are inserted together at its end on PostgreSQL, and what each
// transaction sees and gets is what it would have at once: a request that
// fails after CreateRequest leaves nothing, of two requests racing for one
// key exactly one commits and the other is refused as a duplicate, every
// committed job has the MessageID it is stored with, and a transaction
// that lists the queued jobs after creating its own finds its own.
func TestBatchedRequestsStayExact(t *testing.T) {
	eachCommitMode(t, func(t *testing.T, dsn string, calm bool) {
		s, a, b, tg := openSeeded(t, dsn, calm, 0)
		errBoom := errors.New("boom")
		// Three races, one after the other: requests that commit, fail or
		// have no key; requests of which two race for each key (with
		// some that commit); requests that list the queued jobs.
		const plain, racing, listers = 60, 40, 20
		const n = plain + racing + listers
		type request struct {
			kind int // 0 commits, 1 fails after CreateRequest, 2 races another for its key, 3 has no key, 4 lists the queued jobs
			key  string
			jobs []*push.Job
			seen bool // kind 4: its own job was among the queued
		}
		reqs := make([]request, n)
		for i := range reqs {
			r := &reqs[i]
			r.key = fmt.Sprint("key-", i)
			switch {
			case i < plain:
				r.kind = []int{0, 1, 3}[i%3]
			case i < plain+racing:
				if i%2 == 0 {
					r.kind, r.key = 2, fmt.Sprint("raced-", i/4) // two requests per key
				}
			default:
				r.kind = 4
			}
			if r.kind == 3 {
				r.key = ""
			}
			for k := range 1 + i%2 {
				r.jobs = append(r.jobs, newJob(a, b, tg, fmt.Sprint("m", i, "-", k)))
			}
		}
		lost := func(err error) bool { return errors.Is(err, errBoom) || push.ReasonOf(err) == push.ReasonDuplicate }
		submit := func(i int) error {
			r := &reqs[i]
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				var rec *push.IdempotencyRecord
				if r.key != "" {
					rec = &push.IdempotencyRecord{AccountID: a.ID, Key: r.key, Kind: push.RequestKindSingle, Fingerprint: "f", CreatedAt: t0}
					for _, j := range r.jobs {
						rec.JobIDs = append(rec.JobIDs, j.ID)
					}
				}
				if err := tx.(push.RequestCreator).CreateRequest(ctx, rec, r.jobs); err != nil {
					return err
				}
				switch r.kind {
				case 1:
					return errBoom
				case 4:
					ids, err := tx.QueuedJobs(ctx, b.ID, tg.ID)
					if err != nil {
						return err
					}
					r.seen = slices.Contains(ids, r.jobs[0].ID)
				}
				return nil
			})
		}
		var won []bool
		for _, from := range []int{0, plain, plain + racing} {
			to := map[int]int{0: plain, plain: plain + racing, plain + racing: n}[from]
			won = append(won, race(t, to-from, func(i int) error { return submit(from + i) }, lost)...)
			if from == 0 && strings.HasPrefix(dsn, "postgres") && storage.JoinedRequests(s) == 0 {
				t.Errorf("no request was inserted together with its batch's others: that path was not exercised")
			}
		}
		messageIDs := map[int64]string{}
		raced := map[string]int{}
		for i, r := range reqs {
			if r.kind == 1 && won[i] {
				t.Fatalf("request %d failed after CreateRequest and still committed", i)
			}
			if r.kind == 4 && won[i] && !r.seen {
				t.Errorf("request %d listed the queued jobs after creating its own and did not find it", i)
			}
			if r.kind == 2 && won[i] {
				raced[r.key]++
			}
			for _, j := range r.jobs {
				got, err := s.Job(ctx, j.ID)
				switch {
				case !won[i]:
					if push.KindOf(err) != push.NotFound {
						t.Errorf("request %d failed, but its job %s was written (%v)", i, j.ID, err)
					}
				case err != nil:
					t.Errorf("request %d committed, but its job %s: %v", i, j.ID, err)
				case j.MessageID <= 0 || got.MessageID != j.MessageID:
					t.Errorf("request %d's job %s: MessageID %d, stored %d", i, j.ID, j.MessageID, got.MessageID)
				case messageIDs[j.MessageID] != "":
					t.Errorf("jobs %s and %s have the one MessageID %d", messageIDs[j.MessageID], j.ID, j.MessageID)
				default:
					messageIDs[j.MessageID] = j.ID
				}
			}
			rec, err := s.Idempotency(ctx, a.ID, r.key)
			switch {
			case r.key == "":
			case won[i] && (err != nil || rec.JobIDs[0] != r.jobs[0].ID):
				t.Errorf("request %d committed, but its record: %+v, %v", i, rec, err)
			case !won[i] && r.kind != 2 && push.KindOf(err) != push.NotFound:
				t.Errorf("request %d failed, but its record was written (%v)", i, err)
			}
		}
		for k, wins := range raced {
			if wins != 1 {
				t.Errorf("key %s: %d requests committed it, want 1", k, wins)
			}
		}
		if want := racing / 4; len(raced) != want {
			t.Errorf("%d raced keys committed, want %d", len(raced), want)
		}
	})
}

// TestLoneTransactionsFailAlone: a transaction that comes alone (on
// PostgreSQL a batch of one, without a savepoint) gets its own
// failure, leaves nothing of what it wrote, and does not keep the next
// lone transaction from committing; the first reservation on PostgreSQL
// creates the backlog counters in its batch, without running it again.
func TestLoneTransactionsFailAlone(t *testing.T) {
	eachCommitMode(t, func(t *testing.T, dsn string, calm bool) {
		s, a, b, tg := openSeeded(t, dsn, calm, 0)
		errBoom := errors.New("boom")
		for i := range 3 {
			failed, kept := newJob(a, b, tg, fmt.Sprint("failed ", i)), newJob(a, b, tg, fmt.Sprint("kept ", i))
			err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				rec := &push.IdempotencyRecord{AccountID: a.ID, Key: fmt.Sprint("failed-", i), Kind: push.RequestKindSingle,
					Fingerprint: "f", JobIDs: []string{failed.ID}, CreatedAt: t0}
				if err := tx.(push.RequestCreator).CreateRequest(ctx, rec, []*push.Job{failed}); err != nil {
					return err
				}
				if err := tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, 10, 10); err != nil {
					return err
				}
				return errBoom
			})
			if !errors.Is(err, errBoom) {
				t.Fatalf("round %d: the failing transaction returned %v, want its own error", i, err)
			}
			if _, err := s.Job(ctx, failed.ID); push.KindOf(err) != push.NotFound {
				t.Errorf("round %d: the failed transaction's job: %v, want not found", i, err)
			}
			err = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				if err := tx.CreateJobs(ctx, []*push.Job{kept}); err != nil {
					return err
				}
				return tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, 10, 10)
			})
			if err != nil {
				t.Fatalf("round %d: the transaction after: %v", i, err)
			}
			if _, err := s.Job(ctx, kept.ID); err != nil {
				t.Errorf("round %d: the committed transaction's job: %v", i, err)
			}
		}
		if n := storage.UnfitBatches(s); n != 0 {
			t.Errorf("%d batches ran again with each change made at once; want none (the first reservation creates the counters in its batch)", n)
		}
		// The failed reservations left nothing: 3 of 10 are counted, so 7
		// more fit and the 8th does not.
		err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
			return tx.ReserveBacklog(ctx, map[int64]int{b.ID: 7}, 10, 10)
		})
		if err != nil {
			t.Fatalf("7 more of a backlog of 10 with 3 counted: %v", err)
		}
		err = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
			return tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, 10, 10)
		})
		if push.KindOf(err) != push.TooMany || push.ReasonOf(err) != "backlog_full" {
			t.Errorf("the 11th of a backlog of 10: %v, want it refused as backlog_full", err)
		}
	})
}

// TestCommitNotConfirmedIsNotRunAgain: a batch whose COMMIT the database
// did not confirm in time (here a synchronous standby that never answers,
// so the commit waits past the batch's deadline; likewise a stalled disk
// or an answer lost on the way back) may have been written. Its
// transactions are not run again, which would apply them twice: the
// caller is told the database is unavailable, and the one grant it asked
// for is there once, as the server committed it.
func TestCommitNotConfirmedIsNotRunAgain(t *testing.T) {
	// A synchronous standby that never connects: a transaction that asks
	// for synchronous commit waits for it (the others, as the server's
	// default, do not).
	pg := testkit.StartPostgresServer(t, "synchronous_standby_names=ghost")
	s := open(t, pg.URL())
	storage.SetBatchTimeout(s, time.Second)
	a, _, _ := seed(t, s, 10)
	for _, stmt := range []string{
		// The first grant's COMMIT waits for the standby that never comes.
		`CREATE SEQUENCE slow_once`,
		`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN IF nextval('slow_once') = 1 THEN PERFORM set_config('synchronous_commit', 'on', true); END IF; RETURN NULL; END $$`,
		`CREATE TRIGGER slow AFTER INSERT ON points_ledger FOR EACH ROW EXECUTE FUNCTION slow_commit()`,
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	calls := 0
	err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
		calls++
		return tx.Grant(ctx, push.LedgerEntry{AccountID: a.ID, Kind: push.LedgerGrant, Amount: 5, At: t0})
	})
	if push.KindOf(err) != push.Unavailable || calls != 1 {
		t.Fatalf("a grant whose commit was not confirmed: %v after %d runs; want Unavailable after one", err, calls)
	}
	// The server committed it (locally, before the wait it was cut from).
	var acc push.Account
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if acc, err = s.Account(ctx, a.ID); err == nil && acc.Points != 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grant's row never appeared: %+v, %v", acc, err)
		}
	}
	l, err := s.Ledger(ctx, push.LedgerFilter{AccountID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	grants := 0
	for _, e := range l {
		if e.Kind == push.LedgerGrant {
			grants++
		}
	}
	if acc.Points != 15 || grants != 1 {
		t.Fatalf("after one grant of 5 to 10 points: %d points, %d grants; want 15 and 1", acc.Points, grants)
	}
}
