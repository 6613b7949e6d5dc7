package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

var ctx = context.Background()

// backend is one database the store runs on: dsn returns the address of a
// fresh, empty database for one test.
type backend struct {
	name string
	dsn  func(t *testing.T) string
}

// backends are the databases every store test runs on. The PostgreSQL
// case is skipped without HERALD_TEST_POSTGRES (and fails without it in CI).
func backends() []backend {
	return []backend{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "herald.db") }},
		{"postgres", func(t *testing.T) string { return testkit.PostgresURL(t) }},
	}
}

// eachBackend runs test once per backend, on a fresh database.
func eachBackend(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.dsn(t))
		})
	}
}

func open(t *testing.T, dsn string, opts ...storage.Option) *storage.Store {
	t.Helper()
	s, err := storage.Open(ctx, dsn, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", storage.Redact(dsn), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.UnixMilli(1_800_000_000_000).UTC()

// seed creates an account with points, a bot and a target.
func seed(t *testing.T, s *storage.Store, points int64) (push.Account, push.Bot, push.Target) {
	t.Helper()
	a := push.Account{Name: "acme", Status: push.AccountActive, Points: points, CreatedAt: t0}
	if err := s.CreateAccount(ctx, &a); err != nil {
		t.Fatal(err)
	}
	b := push.Bot{AccountID: a.ID, Platform: "telegram", Name: "tg", Config: json.RawMessage(`{"token":"x"}`), CreatedAt: t0}
	if err := s.CreateBot(ctx, &b); err != nil {
		t.Fatal(err)
	}
	tg := push.Target{BotID: b.ID, Type: push.TargetUser, Address: "42", Name: "me", CreatedAt: t0}
	if err := s.CreateTarget(ctx, &tg); err != nil {
		t.Fatal(err)
	}
	return a, b, tg
}

func newJob(a push.Account, b push.Bot, tg push.Target, content string) *push.Job {
	return &push.Job{
		ID: push.NewJobID(), AccountID: a.ID, BotID: b.ID, TargetID: tg.ID, Platform: b.Platform, TargetType: tg.Type,
		Message: push.Message{Type: push.MsgTypeText, Content: content}, State: push.StateQueued, Cost: 1,
		CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(time.Hour),
	}
}

func createJobs(t *testing.T, s *storage.Store, jobs ...*push.Job) {
	t.Helper()
	if err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error { return tx.CreateJobs(ctx, jobs) }); err != nil {
		t.Fatal(err)
	}
}

// race runs op(0), …, op(n-1) at once and reports which succeeded. An op
// may lose the race only with an error that lost accepts; any other error
// fails the test.
func race(t *testing.T, n int, op func(i int) error, lost func(error) bool) (won []bool) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = op(i) })
	}
	wg.Wait()
	won = make([]bool, n)
	for i, err := range errs {
		switch {
		case err == nil:
			won[i] = true
		case !lost(err):
			t.Errorf("operation %d: %v", i, err)
		}
	}
	return won
}

// refused accepts the errors of one kind and reason.
func refused(kind push.Kind, reason string) func(error) bool {
	return func(err error) bool { return push.KindOf(err) == kind && push.ReasonOf(err) == reason }
}

// wins counts the operations that succeeded.
func wins(won []bool) int {
	n := 0
	for _, w := range won {
		if w {
			n++
		}
	}
	return n
}

func TestStoreCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)

		gotA, err := s.Account(ctx, a.ID)
		if err != nil || !cmp.Equal(gotA, a) {
			t.Fatalf("Account = %+v, %v; want %+v", gotA, err, a)
		}
		if err := s.SetAccountStatus(ctx, a.ID, push.AccountSuspended); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Account(ctx, a.ID); got.Status != push.AccountSuspended {
			t.Fatalf("status %s after suspend", got.Status)
		}
		if _, err := s.Account(ctx, 9999); push.KindOf(err) != push.NotFound {
			t.Fatalf("missing account: %v, want NotFound", err)
		}
		if err := s.SetAccountStatus(ctx, 9999, push.AccountActive); push.KindOf(err) != push.NotFound {
			t.Fatalf("status of a missing account: %v, want NotFound", err)
		}
		if got, err := s.Bot(ctx, b.ID); err != nil || !cmp.Equal(got, b) {
			t.Fatalf("Bot = %+v, %v; want %+v", got, err, b)
		}
		if got, err := s.Targets(ctx, push.TargetFilter{BotID: b.ID}); err != nil || !cmp.Equal(got, []push.Target{tg}) {
			t.Fatalf("Targets = %+v, %v", got, err)
		}
		// A target bound twice violates a unique key.
		dup := push.Target{BotID: b.ID, Type: push.TargetUser, Address: "42", CreatedAt: t0}
		if err := s.CreateTarget(ctx, &dup); push.KindOf(err) != push.Conflict || push.ReasonOf(err) != push.ReasonDuplicate {
			t.Fatalf("duplicate target: %v, want Conflict %s", err, push.ReasonDuplicate)
		}

		k := push.APIKey{AccountID: a.ID, Name: "deploy", Role: push.RoleOperator, UserID: 7, Prefix: "hrd", Hash: "h1", Hint: "hrd_…abcd", CreatedAt: t0}
		if err := s.CreateAPIKey(ctx, &k); err != nil {
			t.Fatal(err)
		}
		if got, err := s.APIKeyByHash(ctx, "h1"); err != nil || !cmp.Equal(got, k) {
			t.Fatalf("APIKeyByHash = %+v, %v; want %+v", got, err, k)
		}
		again := push.APIKey{AccountID: a.ID, Prefix: "hrd", Hash: "h1", CreatedAt: t0}
		if err := s.CreateAPIKey(ctx, &again); push.KindOf(err) != push.Conflict || push.ReasonOf(err) != "key_exists" {
			t.Fatalf("duplicate key hash: %v, want Conflict key_exists", err)
		}
		if err := s.RevokeAPIKey(ctx, k.ID, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.APIKey(ctx, k.ID); !got.RevokedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("revoked at %v", got.RevokedAt)
		}

		j1, j2 := newJob(a, b, tg, "one"), newJob(a, b, tg, "two")
		createJobs(t, s, j1, j2)
		if j1.MessageID == 0 || j2.MessageID <= j1.MessageID {
			t.Fatalf("message ids %d, %d: want increasing and set", j1.MessageID, j2.MessageID)
		}
		got, err := s.Jobs(ctx, []string{j2.ID, j1.ID})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]push.Job{*j2, *j1}, got); diff != "" {
			t.Fatalf("Jobs (-want +got):\n%s", diff)
		}
		if _, err := s.Jobs(ctx, []string{j1.ID, "nope"}); push.KindOf(err) != push.NotFound {
			t.Fatalf("Jobs with a missing id: %v, want NotFound", err)
		}
		ids, err := s.FindJobs(ctx, push.StateQueued, time.Time{}, 0)
		if err != nil || !cmp.Equal(ids, []string{j1.ID, j2.ID}) {
			t.Fatalf("FindJobs = %v, %v", ids, err)
		}
		if ids, _ := s.FindJobs(ctx, push.StateQueued, t0.Add(time.Hour), 1); !cmp.Equal(ids, []string{j1.ID}) {
			t.Fatalf("FindJobs(expired, limit 1) = %v", ids)
		}

		rec := push.IdempotencyRecord{AccountID: a.ID, Key: "k1", Kind: push.RequestKindSingle, Fingerprint: "fp", JobIDs: []string{j1.ID, j2.ID}, CreatedAt: t0}
		if err := s.CreateIdempotency(ctx, &rec); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Idempotency(ctx, a.ID, "k1"); err != nil || !cmp.Equal(got, rec) {
			t.Fatalf("Idempotency = %+v, %v; want %+v", got, err, rec)
		}
		if n, err := s.DeleteIdempotencyBefore(ctx, t0.Add(time.Second), 100); n != 1 || err != nil {
			t.Fatalf("DeleteIdempotencyBefore = %d, %v", n, err)
		}
		if _, err := s.Idempotency(ctx, a.ID, "k1"); push.KindOf(err) != push.NotFound {
			t.Fatalf("deleted record: %v", err)
		}
	})
}

// TestStoreCreateJobsOfOneRequest: a request's jobs are written together
// (one statement on PostgreSQL): every field reads back as written, each
// job gets a message id of its own in the request's order, and a job whose
// id exists already fails the request with none of its jobs written.
func TestStoreCreateJobsOfOneRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)
		var jobs []*push.Job
		for i, m := range []push.Message{
			{Type: push.MsgTypeText, Content: "plain ✓ 中文", Wakeup: true},
			{Type: push.MsgTypeMarkdown, Content: "**bold**"},
			{Type: push.MsgTypeImage, ImageURL: "https://example.com/a.png"},
		} {
			j := newJob(a, b, tg, "")
			j.Message, j.Cost, j.IdempotencyKey = m, int64(i), "key-1"
			jobs = append(jobs, j)
		}
		jobs[2].TargetID, jobs[2].TargetType = 0, ""
		createJobs(t, s, jobs...)
		ids := make([]string, len(jobs))
		want := make([]push.Job, len(jobs))
		for i, j := range jobs {
			ids[i], want[i] = j.ID, *j
			if i > 0 && j.MessageID <= jobs[i-1].MessageID {
				t.Fatalf("message ids %d after %d: want increasing", j.MessageID, jobs[i-1].MessageID)
			}
		}
		got, err := s.Jobs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Jobs (-want +got):\n%s", diff)
		}
		again := []*push.Job{newJob(a, b, tg, "new"), newJob(a, b, tg, "dup")}
		again[1].ID = jobs[0].ID
		err = s.Update(ctx, func(ctx context.Context, tx push.Tx) error { return tx.CreateJobs(ctx, again) })
		if push.KindOf(err) != push.Conflict {
			t.Fatalf("a request with a job id that exists: %v, want Conflict", err)
		}
		if _, err := s.Jobs(ctx, []string{again[0].ID}); push.KindOf(err) != push.NotFound {
			t.Fatalf("the request's other job: %v, want NotFound (nothing written)", err)
		}
	})
}

// TestStoreCreateRequest: a request's idempotency record and its jobs are
// written together (one statement on PostgreSQL), one job or many; a key
// already taken is a Conflict (ReasonDuplicate, which the engine answers
// with a replay) and writes none of the request's jobs.
func TestStoreCreateRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)
		create := func(key string, jobs ...*push.Job) (*push.IdempotencyRecord, error) {
			ids := make([]string, len(jobs))
			for i, j := range jobs {
				ids[i] = j.ID
			}
			rec := &push.IdempotencyRecord{AccountID: a.ID, Key: key, Kind: push.RequestKindSingle, Fingerprint: "fp-" + key, JobIDs: ids, CreatedAt: t0}
			return rec, s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				return tx.(push.RequestCreator).CreateRequest(ctx, rec, jobs)
			})
		}
		for _, n := range []int{1, 3} {
			key := fmt.Sprintf("k%d", n)
			jobs := make([]*push.Job, n)
			for i := range jobs {
				jobs[i] = newJob(a, b, tg, key)
			}
			rec, err := create(key, jobs...)
			if err != nil {
				t.Fatalf("%d jobs: %v", n, err)
			}
			if got, err := s.Idempotency(ctx, a.ID, key); err != nil || !cmp.Equal(got, *rec) {
				t.Fatalf("record of %d jobs: %+v, %v; want %+v", n, got, err, *rec)
			}
			for _, j := range jobs {
				if j.MessageID == 0 {
					t.Fatalf("job %s of %d: no message id", j.ID, n)
				}
				if got, err := s.Job(ctx, j.ID); err != nil || !cmp.Equal(got, *j) {
					t.Fatalf("job of %d: %+v, %v; want %+v", n, got, err, *j)
				}
			}
			again := []*push.Job{newJob(a, b, tg, "again")}
			if n > 1 {
				again = append(again, newJob(a, b, tg, "again"))
			}
			_, err = create(key, again...)
			if push.KindOf(err) != push.Conflict || push.ReasonOf(err) != push.ReasonDuplicate {
				t.Fatalf("key %s taken again: %v, want Conflict %s", key, err, push.ReasonDuplicate)
			}
			if _, err := s.Job(ctx, again[0].ID); push.KindOf(err) != push.NotFound {
				t.Fatalf("a job of the refused request: %v, want NotFound", err)
			}
		}
	})
}

// TestStoreAuthEpoch: every change that can end a key's validity (a
// status change, a revocation) moves the auth epoch once, in its own
// transaction; a change that did not happen does not.
func TestStoreAuthEpoch(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, _, _ := seed(t, s, 0)
		k := push.APIKey{AccountID: a.ID, Prefix: "hrd", Hash: "h", CreatedAt: t0}
		if err := s.CreateAPIKey(ctx, &k); err != nil {
			t.Fatal(err)
		}
		epoch := func() int64 {
			t.Helper()
			n, err := s.AuthEpoch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		e0 := epoch()
		boom := errors.New("boom")
		steps := []struct {
			name string
			op   func() error
			move int64
		}{
			{"suspend", func() error { return s.SetAccountStatus(ctx, a.ID, push.AccountSuspended) }, 1},
			{"status of a missing account", func() error { _ = s.SetAccountStatus(ctx, 9999, push.AccountActive); return nil }, 0},
			{"revoke", func() error { return s.RevokeAPIKey(ctx, k.ID, t0) }, 1},
			{"revoke again", func() error { return s.RevokeAPIKey(ctx, k.ID, t0) }, 0},
			{"status change rolled back", func() error {
				err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
					if err := tx.SetAccountStatus(ctx, a.ID, push.AccountActive); err != nil {
						return err
					}
					return boom
				})
				if !errors.Is(err, boom) {
					return err
				}
				return nil
			}, 0},
		}
		for _, st := range steps {
			if err := st.op(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if e := epoch(); e != e0+st.move {
				t.Fatalf("%s: epoch %d → %d, want a move of %d", st.name, e0, e, st.move)
			}
			e0 += st.move
		}
	})
}

// TestStoreIdempotencyDuplicate: two transactions that create one
// (account, key) record at once: one commits, the other fails as a
// Conflict with reason duplicate (the engine then replays) and leaves
// nothing behind.
func TestStoreIdempotencyDuplicate(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)
		won := race(t, 8, func(i int) error {
			j := newJob(a, b, tg, fmt.Sprint(i))
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				if err := tx.CreateJobs(ctx, []*push.Job{j}); err != nil {
					return err
				}
				return tx.CreateIdempotency(ctx, &push.IdempotencyRecord{AccountID: a.ID, Key: "same", Kind: push.RequestKindSingle, Fingerprint: "fp", JobIDs: []string{j.ID}, CreatedAt: t0})
			})
		}, refused(push.Conflict, push.ReasonDuplicate))
		if ok := wins(won); ok != 1 {
			t.Fatalf("%d transactions committed the key, want 1", ok)
		}
		ids, _ := s.FindJobs(ctx, push.StateQueued, time.Time{}, 0)
		rec, err := s.Idempotency(ctx, a.ID, "same")
		if err != nil || !cmp.Equal(ids, rec.JobIDs) {
			t.Fatalf("stored jobs %v, record %+v (%v): want only the winner's job", ids, rec, err)
		}
	})
}

// TestStoreMoveJobCompareAndSet: many movers race for one job; exactly one
// wins each move and the others get Conflict state_changed.
func TestStoreMoveJobCompareAndSet(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)
		j := newJob(a, b, tg, "x")
		createJobs(t, s, j)
		moves := []push.JobMove{
			{ID: j.ID, From: push.StateQueued, To: push.StateRunning, At: t0.Add(time.Second)},
			{ID: j.ID, From: push.StateQueued, To: push.StateCanceled, At: t0.Add(time.Second), Error: "canceled"},
		}
		won := race(t, 16, func(i int) error {
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				_, err := tx.MoveJob(ctx, moves[i%2])
				return err
			})
		}, refused(push.Conflict, push.ReasonStateChanged))
		if n := wins(won); n != 1 {
			t.Fatalf("%d moves won, want 1", n)
		}
		got, _ := s.Job(ctx, j.ID)
		if got.State == push.StateRunning && got.Attempts != 1 || got.State == push.StateCanceled && got.FinishedAt.IsZero() {
			t.Fatalf("job after the race: %+v", got)
		}
		// An illegal move is refused without touching the row.
		if _, err := s.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateSucceeded, To: push.StateQueued, At: t0}); push.KindOf(err) != push.Conflict {
			t.Fatalf("illegal move: %v, want Conflict", err)
		}
		if _, err := s.MoveJob(ctx, push.JobMove{ID: "missing", From: push.StateQueued, To: push.StateRunning, At: t0}); push.KindOf(err) != push.NotFound {
			t.Fatalf("move of a missing job: %v, want NotFound", err)
		}
	})
}

// TestStoreMoveJobFromKnownJob: a move that carries the job as it stood
// returns the moved job without reading the row back; what it returns is
// what the row holds.
func TestStoreMoveJobFromKnownJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)
		// Instants between milliseconds, in another zone than UTC: the row
		// keeps milliseconds in UTC, and so must the returned job.
		at := t0.Add(1500*time.Microsecond + 7).In(time.FixedZone("X", 3600))
		lives := [][]push.JobMove{
			{
				{To: push.StateRunning, At: at},
				{To: push.StateUncertain, At: at.Add(time.Second), Error: "timed out", PlatformIndex: "42:7"},
				{To: push.StateSucceeded, At: at.Add(2 * time.Second)}, // keeps the index, clears the error
			},
			{
				{To: push.StateRunning, At: at},
				{To: push.StateFailed, At: at.Add(time.Second), Error: "chat not found"},
			},
			{
				{To: push.StateCanceled, At: at, Error: "canceled"},
			},
		}
		for _, life := range lives {
			j := newJob(a, b, tg, "x")
			j.CreatedAt, j.UpdatedAt, j.ExpiresAt = at, at, at.Add(time.Hour)
			createJobs(t, s, j)
			cur := *j // as the caller made it, not as stored
			for _, m := range life {
				m.ID, m.From, m.Job = j.ID, cur.State, &cur
				moved, err := s.MoveJob(ctx, m)
				if err != nil {
					t.Fatalf("move %s → %s: %v", m.From, m.To, err)
				}
				stored, err := s.Job(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(stored, moved); diff != "" {
					t.Fatalf("move %s → %s returned (-stored +returned):\n%s", m.From, m.To, diff)
				}
				cur = moved
			}
		}
	})
}

// TestStoreChargeAndRefundOnce: concurrent charges never take the balance
// below zero, and a job is refunded once however often it is asked.
func TestStoreChargeAndRefundOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 10)
		jobs := make([]*push.Job, 30)
		for i := range jobs {
			jobs[i] = newJob(a, b, tg, fmt.Sprint(i))
		}
		charged := race(t, len(jobs), func(i int) error {
			return s.Charge(ctx, a.ID, []push.LedgerEntry{{AccountID: a.ID, JobID: jobs[i].ID, Kind: push.LedgerCharge, Amount: -1, At: t0}})
		}, refused(push.Invalid, "insufficient_points"))
		if n := wins(charged); n != 10 {
			t.Fatalf("%d charges passed on a balance of 10", n)
		}
		if acc, _ := s.Account(ctx, a.ID); acc.Points != 0 {
			t.Fatalf("balance %d, want 0", acc.Points)
		}
		errRefunded := errors.New("refunded before")
		refunds := race(t, 10, func(int) error {
			ok, err := s.Refund(ctx, push.LedgerEntry{AccountID: a.ID, JobID: jobs[0].ID, Kind: push.LedgerRefund, Amount: 1, At: t0})
			if err == nil && !ok {
				return errRefunded
			}
			return err
		}, func(err error) bool { return errors.Is(err, errRefunded) })
		if n := wins(refunds); n != 1 {
			t.Fatalf("%d refunds of one job, want 1", n)
		}
		if acc, _ := s.Account(ctx, a.ID); acc.Points != 1 {
			t.Fatalf("balance %d after one refund, want 1", acc.Points)
		}
		ledger, _ := s.Ledger(ctx, push.LedgerFilter{AccountID: a.ID})
		kinds := map[push.LedgerKind]int{}
		for _, e := range ledger {
			kinds[e.Kind]++
		}
		if diff := cmp.Diff(map[push.LedgerKind]int{push.LedgerCharge: 10, push.LedgerRefund: 1}, kinds); diff != "" {
			t.Fatalf("ledger (-want +got):\n%s", diff)
		}
		if err := s.SetPoints(ctx, a.ID, 50, t0); err != nil {
			t.Fatal(err)
		}
		ledger, _ = s.Ledger(ctx, push.LedgerFilter{AccountID: a.ID}) // newest first
		if last := ledger[0]; last.Kind != push.LedgerAdjust || last.Amount != 49 {
			t.Fatalf("adjustment %+v, want +49", last)
		}
	})
}

// TestStoreBacklogExact: concurrent reservations never pass the per-bot or
// the total limit, and the counters match what was reserved.
func TestStoreBacklogExact(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		const perBot, total = 30, 50
		bots := []int64{11, 12, 13}
		won := race(t, 120, func(i int) error {
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				return tx.ReserveBacklog(ctx, map[int64]int{bots[i%3]: 1}, perBot, total)
			})
		}, refused(push.TooMany, "backlog_full"))
		var accepted [3]int
		for i, w := range won {
			if w {
				accepted[i%3]++
			}
		}
		sum := 0
		for i, bot := range bots {
			n, err := s.Backlog(ctx, bot)
			if err != nil || n != accepted[i] || n > perBot {
				t.Fatalf("bot %d counter %d (%v), accepted %d, limit %d", bot, n, err, accepted[i], perBot)
			}
			sum += n
		}
		if n, _ := s.Backlog(ctx, 0); sum != total || n != total {
			t.Fatalf("accepted %d in all, total counter %d; want %d", sum, n, total)
		}
		// A reservation for two bots is all or nothing.
		if err := s.ReleaseBacklog(ctx, bots[0], 1); err != nil {
			t.Fatal(err)
		}
		err := s.ReserveBacklog(ctx, map[int64]int{bots[0]: 1, bots[1]: 1}, perBot, total)
		if push.ReasonOf(err) != "backlog_full" {
			t.Fatalf("reservation of 2 with room for 1: %v, want backlog_full", err)
		}
		if n, _ := s.Backlog(ctx, 0); n != total-1 {
			t.Fatalf("total %d after a refused reservation, want %d", n, total-1)
		}
		// A bot's first reservation, over its limit, is refused too.
		err = s.ReserveBacklog(ctx, map[int64]int{99: perBot + 1}, perBot, 10*total)
		if push.ReasonOf(err) != "backlog_full" {
			t.Fatalf("first reservation over the limit: %v, want backlog_full", err)
		}
		if n, _ := s.Backlog(ctx, 0); n != total-1 {
			t.Fatalf("total %d after a refused first reservation, want %d", n, total-1)
		}
	})
}

// TestStoreRecountBacklog: counters that drifted from the job rows are
// corrected, and a recount racing with reservations and releases leaves
// them exact.
func TestStoreRecountBacklog(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 100)
		var jobs []*push.Job
		for i := 0; i < 5; i++ {
			jobs = append(jobs, newJob(a, b, tg, fmt.Sprint(i)))
		}
		err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
			if err := tx.ReserveBacklog(ctx, map[int64]int{b.ID: 5}, 100, 1000); err != nil {
				return err
			}
			return tx.CreateJobs(ctx, jobs)
		})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.RecountBacklog(ctx); n != 0 || err != nil {
			t.Fatalf("recount of exact counters = %d, %v; want 0", n, err)
		}
		// Drift: the counters say 40 and 3 while 5 jobs are active, and a
		// bot with no active job has a counter left over.
		if _, err := s.DB().NewUpdate().Table("backlog").Set("n = 40").Where("bot_id = 0").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().NewUpdate().Table("backlog").Set("n = 3").Where("bot_id = ?", b.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.ReserveBacklog(ctx, map[int64]int{777: 2}, 100, 1000); err != nil {
			t.Fatal(err)
		}
		if n, err := s.RecountBacklog(ctx); n != 3 || err != nil {
			t.Fatalf("recount = %d, %v; want 3 counters corrected", n, err)
		}
		for bot, want := range map[int64]int{0: 5, b.ID: 5, 777: 0} {
			if n, _ := s.Backlog(ctx, bot); n != want {
				t.Fatalf("backlog of %d = %d after the recount, want %d", bot, n, want)
			}
		}

		// Recounts racing with job transactions that keep the counters
		// exact must not disturb them.
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.RecountBacklog(ctx); err != nil {
					t.Errorf("recount: %v", err)
					return
				}
			}
		}()
		var workers sync.WaitGroup
		for w := 0; w < 4; w++ {
			workers.Add(1)
			go func(w int) {
				defer workers.Done()
				for i := 0; i < 15; i++ {
					j := newJob(a, b, tg, fmt.Sprintf("%d-%d", w, i))
					err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
						if err := tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, 1000, 10000); err != nil {
							return err
						}
						return tx.CreateJobs(ctx, []*push.Job{j})
					})
					if err != nil {
						t.Errorf("create: %v", err)
						return
					}
					if i%3 == 0 {
						continue // stays queued
					}
					err = s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
						if _, err := tx.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateQueued, To: push.StateCanceled, At: t0}); err != nil {
							return err
						}
						return tx.ReleaseBacklog(ctx, b.ID, 1)
					})
					if err != nil {
						t.Errorf("settle: %v", err)
						return
					}
				}
			}(w)
		}
		workers.Wait()
		close(stop)
		wg.Wait()
		queued, _ := s.FindJobs(ctx, push.StateQueued, time.Time{}, 0)
		for _, bot := range []int64{0, b.ID} {
			if n, _ := s.Backlog(ctx, bot); n != len(queued) {
				t.Fatalf("backlog of %d = %d with %d active jobs", bot, n, len(queued))
			}
		}
	})
}

// TestStoreUpdateIsAtomic: a transaction whose function fails leaves
// nothing behind.
func TestStoreUpdateIsAtomic(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		a, b, tg := seed(t, s, 10)
		j := newJob(a, b, tg, "x")
		boom := errors.New("boom")
		err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
			if err := tx.Charge(ctx, a.ID, []push.LedgerEntry{{AccountID: a.ID, JobID: j.ID, Kind: push.LedgerCharge, Amount: -1, At: t0}}); err != nil {
				return err
			}
			if err := tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, 100, 1000); err != nil {
				return err
			}
			if err := tx.CreateJobs(ctx, []*push.Job{j}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want boom", err)
		}
		if acc, _ := s.Account(ctx, a.ID); acc.Points != 10 {
			t.Fatalf("balance %d after a rolled-back charge", acc.Points)
		}
		if n, _ := s.Backlog(ctx, 0); n != 0 {
			t.Fatalf("backlog %d after a rolled-back reservation", n)
		}
		if _, err := s.Job(ctx, j.ID); push.KindOf(err) != push.NotFound {
			t.Fatalf("rolled-back job: %v", err)
		}
	})
}

// TestStoreMigrationsIdempotent: several processes opening one database
// at once (each migrates) and a second migration leave one schema with
// every migration applied once.
func TestStoreMigrationsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		const n = 4
		stores := make([]*storage.Store, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				stores[i], errs[i] = storage.Open(ctx, dsn)
			}(i)
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			defer stores[i].Close()
		}
		s := stores[0]
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("second migration: %v", err)
		}
		status, err := s.MigrationStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"20261121000001 applied", "20261121000002 applied", "20261121000003 applied", "20261124000004 applied", "20261124000005 applied", "20261124000006 applied", "20261124000007 applied", "20261125000010 applied", "20261125000011 applied", "20261125000020 applied", "20261127000030 applied"}
		if diff := cmp.Diff(want, status); diff != "" {
			t.Fatalf("migration status (-want +got):\n%s", diff)
		}
		var applied int
		if err := s.DB().NewSelect().Table("herald_migrations").ColumnExpr("COUNT(*)").Scan(ctx, &applied); err != nil || applied != len(want) {
			t.Fatalf("%d migration rows (%v), want %d", applied, err, len(want))
		}
		a, _, _ := seed(t, stores[n-1], 1)
		if _, err := s.Account(ctx, a.ID); err != nil {
			t.Fatalf("the stores do not share one database: %v", err)
		}
	})
}
