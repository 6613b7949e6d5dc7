package storage

import (
	"context"
	"maps"
)

// Backlog counters in shards (PostgreSQL). A counter of one row is a row
// lock that every send takes twice (reserving and releasing) and holds to
// its commit, so that the transactions of every node wait for each
// other's commit in turn: with two API nodes and two workers the
// counters' UPDATEs waited 3–4 ms each, most of the time PostgreSQL
// spent. On PostgreSQL a counter is backlogShards rows instead; a
// reservation or release takes the first row no other transaction holds
// (FOR UPDATE SKIP LOCKED), so concurrent transactions take different
// rows.
//
// The limit stays exact. Each row has a cap, the rows' caps sum to the
// limit they were set under (lim), and a row's count never passes its
// cap, so the counts never pass the limit:
//   - a reservation of k takes a row under the caller's limit with room
//     for k (n + k <= cap AND lim = limit): one no other transaction
//     holds, or, when every row with room is held, the first of them
//     once it is free;
//   - when no row has room (the rows are full, the limit changed, a
//     recount set the counts, the counter is new), it locks all of the
//     counter's rows in shard order, sums them, refuses when the sum and
//     k pass the limit, and otherwise counts k and shares the room left
//     out among the rows as their new caps;
//   - a release takes any row, in the same way; a row's count may go
//     below 0 (the counter is the sum), and its cap stays, so the room
//     grows where jobs ended.
//
// Transactions wait for each other at a counter only when every row they
// could take is held, and for all its rows only when none has room; they
// take counters in one order, so that none waits for a row while holding
// one that the transaction it waits for needs (see mayWait).

// backlogShards is the number of rows of a counter on PostgreSQL: more
// than the transactions a few nodes' group commits have under way at
// once.
const backlogShards = 16

// The statements of the sharded counters, prepared once.
const (
	// reserveShardSQL counts k on a row free to take with room for k under
	// the limit, the row the transaction holds first, and returns its
	// shard: k, bot, limit, k, the shard held (-1: none).
	reserveShardSQL = reserveShardWaitSQL + " SKIP LOCKED" + returningShard
	// reserveShardWaitSQL, with returningShard, is reserveShardSQL that
	// waits for a row held by another transaction, when every row with
	// room is.
	reserveShardWaitSQL = "UPDATE backlog SET n = n + ? WHERE (bot_id, shard) = " +
		"(SELECT bot_id, shard FROM backlog WHERE bot_id = ? AND lim = ? AND n + ? <= cap AND NOT closed " +
		"ORDER BY shard = ? DESC, shard LIMIT 1 FOR UPDATE"
	// releaseShardSQL takes k off a row free to take, the row the
	// transaction holds first, open when the third argument is not 0, and
	// returns its shard: k, bot, open, the shard held (-1: none). A row's
	// count may go below 0: the counter is the sum of its rows.
	releaseShardSQL = releaseShardWaitSQL + " SKIP LOCKED" + returningShard
	// releaseShardWaitSQL, with returningShard, is releaseShardSQL that
	// waits for a row held by another transaction, when every row is.
	releaseShardWaitSQL = "UPDATE backlog SET n = n - ? WHERE (bot_id, shard) = " +
		"(SELECT bot_id, shard FROM backlog WHERE bot_id = ? AND (? = 0 OR NOT closed) " +
		"ORDER BY shard = ? DESC, shard LIMIT 1 FOR UPDATE"
	returningShard = ") RETURNING shard"
	// lockShardsSQL locks a counter's rows in shard order.
	lockShardsSQL = "SELECT shard, n, closed FROM backlog WHERE bot_id = ? ORDER BY shard FOR UPDATE"
	// createShardsSQL creates the rows a counter lacks, closed when the
	// counter is.
	createShardsSQL = "INSERT INTO backlog (bot_id, shard, closed) " +
		"SELECT ?, s, COALESCE((SELECT bool_or(closed) FROM backlog WHERE bot_id = ?), FALSE) FROM generate_series(0, ?) AS s " +
		"ON CONFLICT (bot_id, shard) DO NOTHING"
	// setShardsSQL writes a counter's rows after a reservation's slow
	// path: counts, caps and the limit the caps were set under.
	setShardsSQL = "UPDATE backlog SET n = v.n, cap = v.cap, lim = ? " +
		"FROM unnest(?::int[], ?::bigint[], ?::bigint[]) AS v(shard, n, cap) " +
		"WHERE backlog.bot_id = ? AND backlog.shard = v.shard"
)

// heldShards are the counters' rows a transaction has locked, by counter
// (a shard, or allShards): it counts on them again first (it waits for
// nobody there), and they decide whether it may wait (mayWait).
type heldShards map[int64]int32

// allShards is held's answer for a counter whose rows the transaction
// has all locked (a slow path): it waits for nobody at the counter.
const allShards = -2

// clone returns a copy of h (nil when h holds nothing, as before a
// transaction's first count).
func (h heldShards) clone() heldShards {
	if len(h) == 0 {
		return nil
	}
	return maps.Clone(h)
}

// restore makes h what it was when it was cloned into was.
func (h heldShards) restore(was heldShards) {
	if h != nil {
		clear(h)
		maps.Copy(h, was)
	}
}

// held returns the shard of the counter the transaction holds, allShards,
// or -1 (none).
func (q queries) held(botID int64) int32 {
	if s, ok := q.shards[botID]; ok {
		return s
	}
	return -1
}

// mayWait reports whether the transaction may wait for rows of the
// counter (all of them, with all) without risk of a deadlock: every row
// it holds is of a counter before it in the order every transaction
// takes counters in (the service's, then the bots' by id), or, waiting
// for one row, all of the counter's rows are its own already. The
// transactions of a batch of the group commit that count at once take
// counters in any order among them; a batch that may not wait runs its
// transactions alone (errBatchUnfit), each in that order.
func (q queries) mayWait(botID int64, all bool) bool {
	for c, s := range q.shards {
		if c > botID || c == botID && (all && s >= 0 || !all && s != allShards) {
			return false
		}
	}
	return true
}

// shard is one row of a counter, as the slow paths read it.
type shard struct {
	n      int64
	closed bool
}

// lockShards locks the counter's rows, creating those it lacks, and
// returns them in shard order (see mayWait).
func (q queries) lockShards(ctx context.Context, botID int64) ([]shard, error) {
	if q.grouped && !q.mayWait(botID, true) {
		return nil, errBatchUnfit
	}
	if q.shards != nil {
		defer func() { q.shards[botID] = allShards }()
	}
	for created := false; ; created = true {
		shards, err := q.readShards(ctx, botID)
		if err != nil || len(shards) == backlogShards || created {
			return shards, err
		}
		if _, err := q.exec(ctx, createShardsSQL, botID, botID, backlogShards-1); err != nil {
			return nil, q.fail(err, "create backlog counter")
		}
	}
}

// readShards runs lockShardsSQL.
func (q queries) readShards(ctx context.Context, botID int64) ([]shard, error) {
	st, done, err := q.stmt(ctx, true, lockShardsSQL)
	if err != nil {
		return nil, q.fail(err, "lock backlog counter")
	}
	defer done()
	rows, err := st.QueryContext(ctx, botID)
	if err != nil {
		return nil, q.fail(err, "lock backlog counter")
	}
	defer rows.Close()
	var shards []shard
	for rows.Next() {
		var i int
		var s shard
		if err := rows.Scan(&i, &s.n, &s.closed); err != nil {
			return nil, q.fail(err, "lock backlog counter")
		}
		shards = append(shards, s)
	}
	if err := rows.Err(); err != nil {
		return nil, q.fail(err, "lock backlog counter")
	}
	return shards, nil
}

// took runs a fast path's statement: whether it took a row, which the
// transaction then holds.
func (q queries) took(ctx context.Context, botID int64, query string, args ...any) (ok bool, err error) {
	err = q.runStep(ctx, step{query: query, args: args, rows: true, done: func(_ int64, rows stepRows, serr error) error {
		ok, serr = q.tookRow(botID, rows, serr)
		return serr
	}})
	return ok, err
}

// tookRow reads a fast path's outcome, its rows or its error: whether it
// took a row, which the transaction then holds.
func (q queries) tookRow(botID int64, rows stepRows, err error) (bool, error) {
	var s int32
	took := false
	if err == nil {
		if took = rows.Next(); took {
			err = rows.Scan(&s)
		} else {
			err = rows.Err()
		}
	}
	if err != nil {
		return false, q.fail(err, "count backlog")
	}
	if took && q.shards != nil && q.held(botID) != allShards {
		q.shards[botID] = s
	}
	return took, nil
}

// reserveShard is the fast path of a reservation: false when no row has
// room for n under limit. It takes a row no other transaction holds, or,
// when every row with room is held, waits for the first of them (see
// mayWait).
func (q queries) reserveShard(ctx context.Context, botID int64, n, limit int) (bool, error) {
	held := q.held(botID)
	if ok, err := q.took(ctx, botID, reserveShardSQL, n, botID, limit, n, held); ok || err != nil {
		return ok, err
	}
	if q.grouped && !q.mayWait(botID, false) {
		return false, errBatchUnfit
	}
	return q.took(ctx, botID, reserveShardWaitSQL+returningShard, n, botID, limit, n, held)
}

// reserveShards counts n more active jobs on the bot's counter (the
// service's for totalRow) unless that passes limit.
func (q queries) reserveShards(ctx context.Context, botID int64, n, limit int) error {
	if ok, err := q.reserveShard(ctx, botID, n, limit); ok || err != nil {
		return err
	}
	shards, err := q.lockShards(ctx, botID)
	if err != nil {
		return err
	}
	counts := make([]int64, len(shards))
	var sum int64
	for i, s := range shards {
		if s.closed {
			return botGone(botID)
		}
		counts[i] = s.n
		sum += s.n
	}
	sum = max(sum, 0)
	if sum+int64(n) > int64(limit) {
		return backlogFull(botID, int(sum), limit)
	}
	counts[0] += int64(n)
	return q.setShards(ctx, botID, counts, int64(limit)-sum-int64(n), int64(limit))
}

// setShards writes the counts of the counter's rows and shares room out
// among them as their caps, set under limit.
func (q queries) setShards(ctx context.Context, botID int64, counts []int64, room, limit int64) error {
	idx := make([]int32, len(counts))
	caps := make([]int64, len(counts))
	rows := int64(len(counts))
	for i, n := range counts {
		idx[i] = int32(i)
		caps[i] = n + room/rows
		if int64(i) < room%rows {
			caps[i]++
		}
	}
	if _, err := q.exec(ctx, setShardsSQL, limit, idx, counts, caps, botID); err != nil {
		return q.fail(err, "count backlog")
	}
	return nil
}

// releaseShards counts n fewer active jobs on the bot's counter, on a row
// no other transaction holds or, when every row is held, on the first
// once free. With open (a batch's change that reserved as well) the
// counter must be open, or it fails with errBatchUnfit.
func (q queries) releaseShards(ctx context.Context, botID int64, n int, open bool) error {
	flag := 0
	if open {
		flag = 1
	}
	held := q.held(botID)
	if ok, err := q.took(ctx, botID, releaseShardSQL, n, botID, flag, held); ok || err != nil {
		return err
	}
	if held >= 0 {
		// The row the transaction holds does not qualify: the counter is
		// closed, and a batch that reserved must be run again.
		return errBatchUnfit
	}
	if q.grouped && !q.mayWait(botID, false) {
		return errBatchUnfit
	}
	ok, err := q.took(ctx, botID, releaseShardWaitSQL+returningShard, n, botID, flag, held)
	if err == nil && !ok && open {
		return errBatchUnfit // closed (or none): the batch's reservations are refused alone
	}
	return err // no row: no counter, nothing to release
}

// closeShards closes the counter's rows, creating them first so that no
// row a reservation creates later is open.
func (q queries) closeShards(ctx context.Context, botID int64) error {
	if _, err := q.exec(ctx, createShardsSQL, botID, botID, backlogShards-1); err != nil {
		return q.fail(err, "create backlog counter")
	}
	if _, err := q.exec(ctx, "UPDATE backlog SET closed = TRUE WHERE bot_id = ?", botID); err != nil {
		return q.fail(err, "close backlog counter")
	}
	return nil
}

// recountShards sets the counter to n (a recount found it wrong): the
// count on its first row, and no caps, so that the next reservation
// shares the room out again.
func (q queries) recountShards(ctx context.Context, botID int64, n int64) error {
	res, err := q.exec(ctx, "UPDATE backlog SET n = CASE WHEN shard = 0 THEN ? ELSE 0 END, cap = 0, lim = -1 WHERE bot_id = ?", n, botID)
	if err != nil {
		return q.fail(err, "correct backlog counter")
	}
	if affected, _ := res.RowsAffected(); affected > 0 {
		return nil
	}
	if _, err := q.exec(ctx, "INSERT INTO backlog (bot_id, shard, n) VALUES (?, 0, ?)", botID, n); err != nil {
		return q.fail(err, "correct backlog counter")
	}
	return nil
}
