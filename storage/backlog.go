package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/heraldpush/herald/push"
)

// The backlog table counts active (queued or running) jobs per bot, with
// the row of bot 0 counting the whole service. Counters change in the
// transactions that create and settle jobs, so they are exact; the
// conditional updates take row locks on databases that have them, so they
// stay exact under concurrency.

const totalRow = 0

// The statements of the backlog counters, prepared once.
const (
	addBacklogSQL     = "UPDATE backlog SET n = n + ? WHERE bot_id = ? AND n + ? <= ? AND NOT closed"
	createBacklogSQL  = "INSERT INTO backlog (bot_id, n) VALUES (?, 0) ON CONFLICT (bot_id) DO NOTHING"
	releaseBacklogSQL = "UPDATE backlog SET n = CASE WHEN n >= ? THEN n - ? ELSE 0 END WHERE bot_id = ?"
)

// ReserveBacklog implements push.Tx.
func (q queries) ReserveBacklog(ctx context.Context, perBot map[int64]int, maxPerBot, maxTotal int) error {
	total := 0
	var one [1]int64
	bots := one[:0]
	for id, n := range perBot {
		total += n
		bots = append(bots, id)
	}
	if total == 0 {
		return nil
	}
	if q.backlog != nil {
		q.backlog.reserve(perBot, maxPerBot, maxTotal)
		return nil
	}
	slices.Sort(bots) // one lock order for every transaction
	if q.store.dialect.backlogShards {
		return q.atomic(ctx, func(ctx context.Context, q queries) error {
			if err := q.reserveShards(ctx, totalRow, total, maxTotal); err != nil {
				return err
			}
			for _, id := range bots {
				if err := q.reserveShards(ctx, id, perBot[id], maxPerBot); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		ok, err := q.addBacklog(ctx, totalRow, total, maxTotal)
		if err != nil {
			return err
		}
		if !ok {
			n, _ := q.Backlog(ctx, totalRow)
			return backlogFull(totalRow, n, maxTotal)
		}
		for _, id := range bots {
			ok, err := q.addBacklog(ctx, id, perBot[id], maxPerBot)
			if err != nil {
				return err
			}
			if !ok {
				var row backlogRow
				if err := q.w.NewSelect().Model(&row).Where("bot_id = ?", id).Scan(ctx); err == nil && row.Closed {
					return botGone(id)
				}
				n, _ := q.Backlog(ctx, id)
				return backlogFull(id, n, maxPerBot)
			}
		}
		return nil
	})
}

// backlogFull is the refusal of a reservation that would pass the limit
// of the bot's counter (the service's for totalRow), which counts n.
func backlogFull(botID int64, n, limit int) error {
	if botID == totalRow {
		return &push.Error{Kind: push.TooMany, Reason: "backlog_full", RetryAfter: 5 * time.Second,
			Message: fmt.Sprintf("the service queue is full: %d messages are waiting (limit %d); retry later", n, limit)}
	}
	return &push.Error{Kind: push.TooMany, Reason: "backlog_full", RetryAfter: 5 * time.Second,
		Message: fmt.Sprintf("the queue of bot %d is full: %d messages are waiting (limit %d); retry after some are sent", botID, n, limit)}
}

// botGone is the refusal of a reservation at a closed counter: DeleteBot
// closed it, the bot is gone.
func botGone(botID int64) error {
	return push.Errorf(push.NotFound, "bot_not_found", "bot %d does not exist in your account: check the bot id", botID)
}

// addBacklog counts n more active jobs on the bot's counter (the service's
// for totalRow) unless that passes max, creating the counter on first use.
func (q queries) addBacklog(ctx context.Context, botID int64, n, max int) (bool, error) {
	for created := false; ; created = true {
		res, err := q.exec(ctx, addBacklogSQL, n, botID, n, max)
		if err != nil {
			return false, q.fail(err, "count backlog")
		}
		if affected, _ := res.RowsAffected(); affected == 1 {
			return true, nil
		}
		if created {
			return false, nil // the counter exists: the limit refused
		}
		// No row matched: the counter is full, or does not exist yet.
		// The UPDATE runs again even when this INSERT finds the row: on
		// PostgreSQL another transaction may have created it since.
		if _, err := q.exec(ctx, createBacklogSQL, botID); err != nil {
			return false, q.fail(err, "create backlog counter")
		}
	}
}

// ReleaseBacklog implements push.Tx.
func (q queries) ReleaseBacklog(ctx context.Context, botID int64, n int) error {
	// One statement per row, the service's first: the order in which
	// ReserveBacklog locks them. (A single UPDATE of both rows may lock
	// them in any order on PostgreSQL, which scans a table this small
	// sequentially, and deadlock with a reservation.)
	if q.backlog != nil {
		q.backlog.release(botID, n)
		return nil
	}
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		for _, id := range [2]int64{totalRow, botID} {
			if q.store.dialect.backlogShards {
				if err := q.releaseShards(ctx, id, n, false); err != nil {
					return err
				}
				continue
			}
			if _, err := q.exec(ctx, releaseBacklogSQL, n, n, id); err != nil {
				return q.fail(err, "release backlog")
			}
		}
		return nil
	})
}

// Backlog implements push.Tx.
func (q queries) Backlog(ctx context.Context, botID int64) (int, error) {
	var n int64
	err := q.r.NewSelect().Model((*backlogRow)(nil)).ColumnExpr("COALESCE(SUM(n), 0)").Where("bot_id = ?", botID).Scan(ctx, &n)
	if err != nil {
		return 0, q.fail(err, "read backlog")
	}
	return int(max(n, 0)), nil
}

// BacklogByPlatform returns the number of active (queued or running) jobs
// of each platform that has any, counted from the jobs themselves (for
// metrics; the limits are enforced on the counters).
func (s *Store) BacklogByPlatform(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		Platform string `bun:"platform"`
		N        int64  `bun:"n"`
	}
	err := s.r.NewSelect().Model((*jobRow)(nil)).
		ColumnExpr("platform").ColumnExpr("count(*) AS n").
		Where("(state = ? OR state = ?)", string(push.StateQueued), string(push.StateRunning)). // the partial index jobs_active
		Group("platform").
		Scan(ctx, &rows)
	if err != nil {
		return nil, s.fail(err, "count backlog by platform")
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Platform] = int(r.N)
	}
	return out, nil
}

// RecountBacklog recomputes the backlog counters from the job rows and
// corrects every counter that differs; it returns how many it corrected.
// The counters change in the same transactions as the jobs, so they only
// drift when rows were edited by hand or restored from a backup; the
// engine's reconciler calls this as a guard.
//
// On PostgreSQL the counter table is locked against writers (readers go
// on) while the jobs are counted: transactions that reserve or release
// backlog wait, and a transaction that moved a job but has not released
// its counter yet is counted on both sides as still active.
func (s *Store) RecountBacklog(ctx context.Context) (int, error) {
	var fixed int
	err := s.runTx(ctx, func(ctx context.Context, q queries) error {
		fixed = 0
		if q.backlog.holds() {
			// The counters are set from the jobs: the batch's changes
			// made before must be in them first.
			return errBatchUnfit
		}
		if err := q.selectsJobs(); err != nil {
			return err // and so must its new jobs, which it counts
		}
		if s.dialect.lockReads {
			if _, err := q.w.ExecContext(ctx, "LOCK TABLE backlog IN SHARE ROW EXCLUSIVE MODE"); err != nil {
				return q.fail(err, "lock backlog counters")
			}
		}
		var active []struct {
			BotID int64
			N     int64
		}
		if err := q.w.NewSelect().Model((*jobRow)(nil)).
			Column("bot_id").ColumnExpr("COUNT(*) AS n").
			Where("(state = ? OR state = ?)", string(push.StateQueued), string(push.StateRunning)). // the partial index jobs_active
			Group("bot_id").
			Scan(ctx, &active); err != nil {
			return q.fail(err, "count active jobs")
		}
		want := map[int64]int64{totalRow: 0}
		for _, a := range active {
			want[a.BotID] = a.N
			want[totalRow] += a.N
		}
		var rows []backlogRow
		if err := q.w.NewSelect().Model(&rows).Column("bot_id").ColumnExpr("SUM(n) AS n").Group("bot_id").Scan(ctx); err != nil {
			return q.fail(err, "read backlog counters")
		}
		have := make(map[int64]int64, len(rows))
		for _, r := range rows {
			have[r.BotID] = r.N
			if _, ok := want[r.BotID]; !ok {
				want[r.BotID] = 0
			}
		}
		for bot, n := range want {
			if cur, ok := have[bot]; ok && cur == n || !ok && n == 0 {
				continue
			}
			if s.dialect.backlogShards {
				if err := q.recountShards(ctx, bot, n); err != nil {
					return err
				}
				fixed++
				continue
			}
			row := backlogRow{BotID: bot, N: n}
			if _, err := q.w.NewInsert().Model(&row).On("CONFLICT (bot_id) DO UPDATE").Set("n = EXCLUDED.n").Exec(ctx); err != nil {
				return q.fail(err, "correct backlog counter")
			}
			fixed++
		}
		return nil
	})
	return fixed, err
}

// closeBacklog closes a bot's counter (creating it closed if needed), so
// that ReserveBacklog refuses the bot from then on. On databases with row
// locks, it waits for the reservations under way, whose jobs its
// transaction then finds.
func (q queries) closeBacklog(ctx context.Context, botID int64) error {
	if q.backlog.holds() {
		// Reservations of the batch made before must be counted (or
		// refused) before the counter closes.
		return errBatchUnfit
	}
	if q.store.dialect.backlogShards {
		return q.closeShards(ctx, botID)
	}
	if _, err := q.exec(ctx, createBacklogSQL, botID); err != nil {
		return q.fail(err, "create backlog counter")
	}
	if _, err := q.w.NewUpdate().Model((*backlogRow)(nil)).Set("closed = TRUE").Where("bot_id = ?", botID).Exec(ctx); err != nil {
		return q.fail(err, "close backlog counter")
	}
	return nil
}

// flushBacklogSQL applies a batch's net change to one counter: the
// releases (never below 0) and, when it reserved any (the fourth
// argument), only within the limit and while the counter is open.
const flushBacklogSQL = "UPDATE backlog SET n = CASE WHEN n + ? >= 0 THEN n + ? ELSE 0 END " +
	"WHERE bot_id = ? AND (? = 0 OR (n + ? <= ? AND NOT closed))"

// backlogBatch holds the backlog changes of the transactions committed
// together in one batch, so that the counters (which every send
// reserves and releases, and which on PostgreSQL are row locks held to
// the commit) are updated once per batch at its end instead of four
// times per send. A batch's transactions commit together, so any order
// among them is one in which they could have run: the batch's releases
// are counted before its reservations, which are checked against the
// limits together. When the check fails (a limit reached, a counter
// closed or not created yet) the batch is run again with each
// transaction updating the counters itself, and refused alone if it must
// be.
type backlogBatch struct {
	kept    map[int64]*backlogDelta // of the transactions that succeeded
	pending map[int64]*backlogDelta // of the transaction running
	// missed are the counters whose fast path, at the batch's end, took
	// no row (see steps and flushMissed).
	missed []int64
}

type backlogDelta struct {
	net      int // jobs reserved minus jobs released
	reserved int // jobs reserved
	max      int // the lowest limit a reservation was made under
}

func newBacklogBatch() *backlogBatch {
	return &backlogBatch{kept: make(map[int64]*backlogDelta), pending: make(map[int64]*backlogDelta)}
}

// errBatchUnfit says that the changes a batch of the group commit made
// at its end do not hold together (backlog reservations over a limit, a
// counter closed or missing, a job moved meanwhile): the batch runs again
// with each transaction making its changes at once.
var errBatchUnfit = errors.New("storage: the batch's changes need to be made one by one")

// holds reports whether the batch has changes not yet made (false for
// nil).
func (b *backlogBatch) holds() bool { return b != nil && (len(b.kept) > 0 || len(b.pending) > 0) }

func (b *backlogBatch) delta(botID int64) *backlogDelta {
	d := b.pending[botID]
	if d == nil {
		d = &backlogDelta{max: math.MaxInt}
		b.pending[botID] = d
	}
	return d
}

func (b *backlogBatch) reserve(perBot map[int64]int, maxPerBot, maxTotal int) {
	for id, n := range perBot {
		d := b.delta(id)
		d.net += n
		d.reserved += n
		d.max = min(d.max, maxPerBot)
		t := b.delta(totalRow)
		t.net += n
		t.reserved += n
		t.max = min(t.max, maxTotal)
	}
}

func (b *backlogBatch) release(botID int64, n int) {
	b.delta(botID).net -= n
	b.delta(totalRow).net -= n
}

// keep adds the running transaction's changes to the batch's (it
// succeeded); drop forgets them (it failed and was rolled back). Both do
// nothing on a nil batch (the transaction counts its own).
func (b *backlogBatch) keep() {
	if b == nil {
		return
	}
	for id, d := range b.pending {
		k := b.kept[id]
		if k == nil {
			k = &backlogDelta{max: math.MaxInt}
			b.kept[id] = k
		}
		k.net += d.net
		k.reserved += d.reserved
		k.max = min(k.max, d.max)
	}
	clear(b.pending)
}

func (b *backlogBatch) drop() {
	if b != nil {
		clear(b.pending)
	}
}

// flushShards applies one counter's change of a batch whose fast path
// took no row (see backlog_shards.go): a reservation by the slow path
// where the batch may wait for the counter's rows (a new counter, rows
// without room), a release on the first row once free. It fails with
// errBatchUnfit where the batch may not wait, or where the batch's
// reservations do not fit together (or the counter closed): then each
// transaction reserves its own.
func (q queries) flushShards(ctx context.Context, botID int64, d *backlogDelta) error {
	if d.net > 0 {
		err := q.reserveShards(ctx, botID, d.net, d.max)
		if r := push.ReasonOf(err); r == "backlog_full" || r == "bot_not_found" {
			return errBatchUnfit
		}
		return err
	}
	return q.releaseShards(ctx, botID, -d.net, d.reserved > 0)
}

// steps returns the statements of the kept changes, the service's counter
// first, then the bots' in ascending order (the order ReserveBacklog locks
// them in). On PostgreSQL each is the fast path of its counter's change (a
// row free to take, with room for a reservation); a counter whose fast
// path took no row is added to b.missed, for flushMissed.
func (b *backlogBatch) steps(q queries) []step {
	ids := make([]int64, 0, len(b.kept))
	for id := range b.kept {
		ids = append(ids, id)
	}
	slices.Sort(ids) // totalRow (0) first
	steps := make([]step, 0, len(ids))
	for _, id := range ids {
		d := b.kept[id]
		if d.net == 0 && d.reserved == 0 {
			continue
		}
		if q.store.dialect.backlogShards {
			steps = append(steps, b.shardStep(q, id, d))
			continue
		}
		steps = append(steps, step{
			query: flushBacklogSQL,
			args:  []any{d.net, d.net, id, d.reserved, d.net, d.max},
			done: func(n int64, _ stepRows, err error) error {
				if err != nil {
					return q.fail(err, "count backlog")
				}
				if n != 1 {
					return errBatchUnfit
				}
				return nil
			},
		})
	}
	return steps
}

// shardStep is the fast path of one counter's change of a batch; see steps.
func (b *backlogBatch) shardStep(q queries, botID int64, d *backlogDelta) step {
	held := q.held(botID)
	query, args := reserveShardSQL, []any{d.net, botID, d.max, d.net, held}
	if d.net <= 0 {
		open := 0
		if d.reserved > 0 {
			open = 1
		}
		query, args = releaseShardSQL, []any{-d.net, botID, open, held}
	}
	return step{query: query, args: args, rows: true, done: func(_ int64, rows stepRows, err error) error {
		ok, err := q.tookRow(botID, rows, err)
		if err == nil && !ok {
			b.missed = append(b.missed, botID)
		}
		return err
	}}
}

// flushMissed applies the changes of the counters whose fast path took no
// row, one after the other, in the order steps gave them (each may wait for
// a row, or fail with errBatchUnfit), and then clears the batch.
func (b *backlogBatch) flushMissed(ctx context.Context, q queries) error {
	for _, id := range b.missed {
		if err := q.flushShards(ctx, id, b.kept[id]); err != nil {
			return err
		}
	}
	b.missed = b.missed[:0]
	clear(b.kept)
	return nil
}
