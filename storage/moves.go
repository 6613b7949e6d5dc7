package storage

// flushMovesSQL makes the job moves of a batch of the group commit in one
// statement (PostgreSQL): each row of the arrays is one move as
// moveJobSQL makes it, of a job that must still be in the state and the
// retry wait the move was decided on.
const flushMovesSQL = "UPDATE jobs SET state = v.to_state, updated_ms = v.at, " +
	"started_ms = CASE WHEN v.started = 1 THEN v.at ELSE jobs.started_ms END, attempts = jobs.attempts + v.started, " +
	"finished_ms = CASE WHEN v.finished = 1 THEN v.at ELSE jobs.finished_ms END, " +
	"error = CASE WHEN v.set_error = 1 THEN v.error ELSE jobs.error END, " +
	"platform_index = CASE WHEN v.platform_index = '' THEN jobs.platform_index ELSE v.platform_index END, retry_ms = 0 " +
	"FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::int[], ?::int[], ?::int[], ?::text[], ?::text[], ?::bigint[]) " +
	"AS v(id, from_state, to_state, at, started, finished, set_error, error, platform_index, retry_ms) " +
	"WHERE jobs.id = v.id AND jobs.state = v.from_state AND jobs.retry_ms = v.retry_ms"

// moveBatch holds the moves of jobs whose state the mover knew (a worker
// claiming the job its request created, a worker recording its outcome)
// made by the transactions of one batch of the group commit, so that
// they are written in one statement at the batch's end instead of one
// each. Each move is checked there as it would have been at once (the job
// still in the state it was decided on); should one not be, the batch runs
// again with each move made at once, where the mover sees what changed.
type moveBatch struct {
	kept, pending []jobMoveArgs
}

// jobMoveArgs are one move's values, as moveJobSQL takes them.
type jobMoveArgs struct {
	id, from, to              string
	at                        int64
	started, finished, setErr int
	errMsg, platformIndex     string
	retryMs                   int64
}

// args are the move's values as moveJobSQL takes them.
func (m jobMoveArgs) args() []any {
	return []any{m.to, m.at,
		m.started, m.at, m.started,
		m.finished, m.at,
		m.setErr, m.errMsg,
		m.platformIndex, m.platformIndex,
		m.id, m.from, m.retryMs}
}

func (b *moveBatch) add(m jobMoveArgs) { b.pending = append(b.pending, m) }

// keep and drop end the running transaction: its moves are kept (it
// succeeded) or forgotten (it was rolled back).
func (b *moveBatch) keep() {
	if b != nil {
		b.kept = append(b.kept, b.pending...)
		b.pending = b.pending[:0]
	}
}

func (b *moveBatch) drop() {
	if b != nil {
		b.pending = b.pending[:0]
	}
}

// step returns the statement that writes the kept moves (false: there
// are none). Its done fails with errBatchUnfit when one of them found its
// job moved meanwhile.
func (b *moveBatch) step(q queries) (step, bool) {
	if b == nil || len(b.kept) == 0 {
		return step{}, false
	}
	n := len(b.kept)
	query, args := flushMovesSQL, []any(nil)
	if n == 1 {
		// One row: the statement of a move made at once, which costs
		// PostgreSQL less than the arrays' for one row.
		query, args = moveJobSQL, b.kept[0].args()
	} else {
		args = b.arrays()
	}
	return step{query: query, args: args, done: func(moved int64, _ stepRows, err error) error {
		if err != nil {
			return q.fail(err, "move jobs")
		}
		if moved != int64(n) {
			return errBatchUnfit
		}
		b.kept = b.kept[:0]
		return nil
	}}, true
}

// arrays are the kept moves' values as flushMovesSQL takes them.
func (b *moveBatch) arrays() []any {
	n := len(b.kept)
	var (
		ids, froms, tos, errs, indexes = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		ats, retries                   = make([]int64, n), make([]int64, n)
		started, finished, setErr      = make([]int32, n), make([]int32, n), make([]int32, n)
	)
	for i, m := range b.kept {
		ids[i], froms[i], tos[i], errs[i], indexes[i] = m.id, m.from, m.to, m.errMsg, m.platformIndex
		ats[i], retries[i] = m.at, m.retryMs
		started[i], finished[i], setErr[i] = int32(m.started), int32(m.finished), int32(m.setErr)
	}
	return []any{ids, froms, tos, ats, started, finished, setErr, errs, indexes, retries}
}
