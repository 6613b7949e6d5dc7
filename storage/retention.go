package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// endedStates are the states of jobs that ended for good: the retention
// deletes them. An uncertain job waits for someone to resolve it.
func endedStates() any {
	return inList([]string{string(push.StateSucceeded), string(push.StateFailed), string(push.StateCanceled), string(push.StateExpired)})
}

// summarySQL adds a month's sum to an account's summary row of the ledger,
// or makes the row. Concurrent pruners (nodes of one database) each add
// only the rows their own DELETE … RETURNING took, so no row is counted
// twice; the unique index of summaries makes them meet on one row.
const summarySQL = "INSERT INTO points_ledger (id, account_id, job_id, kind, amount, created_ms) VALUES (?, ?, NULL, 'summary', ?, ?) " +
	"ON CONFLICT (account_id, created_ms) WHERE kind = 'summary' DO UPDATE SET amount = points_ledger.amount + excluded.amount"

// PruneJobs implements push.Store.
func (s *Store) PruneJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	var n int
	err := s.runTx(ctx, func(ctx context.Context, q queries) error {
		n = 0
		// The oldest first, by the primary key: the scan starts at the
		// oldest job left and stops at limit. Pruners on other nodes may
		// pick the same jobs: the ones another deleted first are not
		// returned here.
		var gone []string
		if err := q.w.NewRaw("DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state IN (?) AND updated_ms < ? ORDER BY seq LIMIT ?) RETURNING id",
			endedStates(), toMs(before), limit).Scan(ctx, &gone); err != nil && !isNoRows(err) {
			return q.fail(err, "delete jobs past the retention")
		}
		if len(gone) == 0 {
			return nil
		}
		n = len(gone)
		if _, err := q.w.NewRaw("DELETE FROM job_replies WHERE job_id IN (?)", inList(gone)).Exec(ctx); err != nil {
			return q.fail(err, "delete the replies of old jobs")
		}
		var rows []ledgerRow
		if err := q.w.NewRaw("DELETE FROM points_ledger WHERE job_id IN (?) AND kind IN ('charge', 'refund') RETURNING id, account_id, amount, created_ms", inList(gone)).Scan(ctx, &rows); err != nil && !isNoRows(err) {
			return q.fail(err, "summarize the ledger of old jobs")
		}
		return q.summarize(ctx, rows)
	})
	if err != nil || n == 0 || s.dialect.reclaim == "" {
		return n, err
	}
	// Give some of the freed pages back to the file system; the rest are
	// reused by the next writes either way.
	if _, err := s.w.ExecContext(ctx, s.dialect.reclaim); err != nil {
		return n, s.dialect.classify(err)
	}
	return n, nil
}

// summarize adds the ledger rows (deleted with their jobs) to their
// accounts' summary rows, one per account and month (UTC). A new summary
// row takes the id of the first row it sums, so that it keeps that row's
// place in the ledger's order.
func (q queries) summarize(ctx context.Context, rows []ledgerRow) error {
	type month struct {
		account int64
		start   int64
	}
	sums := make(map[month]*ledgerRow)
	var order []month
	for _, r := range rows {
		t := fromMs(r.CreatedMs).UTC()
		m := month{r.AccountID, toMs(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC))}
		sum, ok := sums[m]
		if !ok {
			sum = &ledgerRow{ID: r.ID, AccountID: r.AccountID, CreatedMs: m.start}
			sums[m] = sum
			order = append(order, m)
		}
		sum.ID = min(sum.ID, r.ID)
		sum.Amount += r.Amount
	}
	for _, m := range order {
		r := sums[m]
		if _, err := q.exec(ctx, summarySQL, r.ID, r.AccountID, r.Amount, r.CreatedMs); err != nil {
			return q.fail(err, "write the ledger's summary")
		}
	}
	return nil
}
