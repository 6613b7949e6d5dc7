package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heraldpush/herald/push"
)

// jobColumns are the columns of a job row, in the order scanJob reads
// them.
const jobColumns = "seq, id, account_id, bot_id, target_id, platform, target_type, msg_type, content, image_url, wakeup, " +
	"state, cost, attempts, error, platform_index, idem_key, created_ms, updated_ms, started_ms, finished_ms, expires_ms, " +
	"resolved_ms, resolved_by, note, retry_ms"

// insertJobPrefix names the columns a new job is written with, in the
// order of jobArgs and jobArrays.
const insertJobPrefix = "INSERT INTO jobs (id, account_id, bot_id, target_id, platform, target_type, msg_type, content, image_url, wakeup, " +
	"state, cost, attempts, error, platform_index, idem_key, created_ms, updated_ms, started_ms, finished_ms, expires_ms) "

// The hot statements of a job's life, prepared once.
const (
	insertJobSQL = insertJobPrefix + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	// insertJobReturningSQL returns the new seq where the database has no
	// last insert id (PostgreSQL).
	insertJobReturningSQL = insertJobSQL + " RETURNING seq"
	// insertJobsSQL inserts the jobs of one request in one statement where
	// the database takes arrays (PostgreSQL: a batch of 50 targets is one
	// round trip, not 50), returning each new seq by id.
	insertJobsSQL = insertJobPrefix + "SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::int[], ?::text[], ?::text[], ?::boolean[], " +
		"?::text[], ?::bigint[], ?::int[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[]) " +
		"RETURNING id, seq"
	selectJobSQL = "SELECT " + jobColumns + " FROM jobs WHERE id = ?"
	// moveJobSQL sets started_ms (and counts an attempt) when the first
	// flag is 1, finished_ms when the second is, the error when the third
	// is, and the platform index when one is given. It moves a job that
	// is in the state given and waits to retry until the time given (0:
	// not waiting), and ends the wait.
	moveJobSQL = "UPDATE jobs SET state = ?, updated_ms = ?, " +
		"started_ms = CASE WHEN ? = 1 THEN ? ELSE started_ms END, attempts = attempts + ?, " +
		"finished_ms = CASE WHEN ? = 1 THEN ? ELSE finished_ms END, " +
		"error = CASE WHEN ? = 1 THEN ? ELSE error END, " +
		"platform_index = CASE WHEN ? = '' THEN platform_index ELSE ? END, retry_ms = 0 " +
		"WHERE id = ? AND state = ? AND retry_ms = ?"
	moveJobReturningSQL = moveJobSQL + " RETURNING " + jobColumns
	// parkJobSQL hands a running job that is being sent back to the
	// queue until retry_ms, with the error that made it wait.
	parkJobSQL = "UPDATE jobs SET retry_ms = ?, updated_ms = ?, error = ? WHERE id = ? AND state = 'running' AND retry_ms = 0"
	// resumeJobSQL claims a running job that waits to retry until the time
	// given for sending again, and counts the attempt.
	resumeJobSQL = "UPDATE jobs SET retry_ms = 0, updated_ms = ?, attempts = attempts + 1 " +
		"WHERE id = ? AND state = 'running' AND retry_ms = ? RETURNING " + jobColumns
)

// scanJob reads a row of jobColumns.
func scanJob(scan func(dest ...any) error) (jobRow, error) {
	var r jobRow
	err := scan(rowDest(&r)...)
	return r, err
}

// rowDest returns the destinations of a row of jobColumns in r.
func rowDest(r *jobRow) []any {
	return []any{&r.Seq, &r.ID, &r.AccountID, &r.BotID, &r.TargetID, &r.Platform, &r.TargetType, &r.MsgType, &r.Content, &r.ImageURL,
		&r.Wakeup, &r.State, &r.Cost, &r.Attempts, &r.Error, &r.PlatformIndex, &r.IdemKey, &r.CreatedMs, &r.UpdatedMs,
		&r.StartedMs, &r.FinishedMs, &r.ExpiresMs, &r.ResolvedMs, &r.ResolvedBy, &r.Note, &r.RetryMs}
}

// CreateJobs implements push.Tx.
func (q queries) CreateJobs(ctx context.Context, jobs []*push.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if !q.store.dialect.lastInsertID {
		return q.insertReturning(ctx, "", nil, jobs)
	}
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		st, done, err := q.stmt(ctx, true, insertJobSQL)
		if err != nil {
			return q.fail(err, "create jobs")
		}
		defer done()
		for _, j := range jobs {
			res, err := st.ExecContext(ctx, jobArgs(j)...)
			if err == nil {
				j.MessageID, err = res.LastInsertId()
			}
			if err != nil {
				return q.fail(err, "create jobs")
			}
		}
		return nil
	})
}

// CreateRequest implements push.RequestCreator: on PostgreSQL the
// idempotency record and the jobs are one statement (the record's insert
// a data-modifying WITH of the jobs' insert), so that a keyed send's
// accept is one round trip; elsewhere the two calls.
func (q queries) CreateRequest(ctx context.Context, rec *push.IdempotencyRecord, jobs []*push.Job) error {
	if q.inserts != nil && len(jobs) > 0 {
		q.inserts.add(rec, jobs) // inserted at the batch's end
		return nil
	}
	if rec == nil || q.store.dialect.lastInsertID || len(jobs) == 0 {
		if rec != nil {
			if err := q.CreateIdempotency(ctx, rec); err != nil {
				return err
			}
		}
		return q.CreateJobs(ctx, jobs)
	}
	return q.insertReturning(ctx, withIdempotencySQL, idempotencyArgs(rec), jobs)
}

// withIdempotencySQL puts an idempotency record's insert before a job
// insert, in the same statement.
const withIdempotencySQL = "WITH idem AS (" + insertIdempotencySQL + ") "

// jobArgs are a job's values as insertJobSQL takes them.
func jobArgs(j *push.Job) []any {
	r := jobToRow(j)
	return []any{r.ID, r.AccountID, r.BotID, r.TargetID, r.Platform, r.TargetType, r.MsgType, r.Content,
		r.ImageURL, r.Wakeup, r.State, r.Cost, r.Attempts, r.Error, r.PlatformIndex, r.IdemKey, r.CreatedMs, r.UpdatedMs,
		r.StartedMs, r.FinishedMs, r.ExpiresMs}
}

// insertReturning inserts jobs where the database returns new keys
// (PostgreSQL), after prefix (a WITH clause, whose values are lead), and
// sets each job's MessageID to its new seq (see insertStep).
func (q queries) insertReturning(ctx context.Context, prefix string, lead []any, jobs []*push.Job) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		return q.runStep(ctx, q.insertStep(prefix, lead, jobs, func(err error) error { return err }))
	})
}

// insertStep is the statement that inserts jobs where the database
// returns new keys (PostgreSQL), after prefix (a WITH clause, whose values
// are lead): one job with insertJobReturningSQL, more in one statement
// with insertJobsSQL. Its done sets each job's MessageID to its new seq
// and hands the outcome, classified, to then.
func (q queries) insertStep(prefix string, lead []any, jobs []*push.Job, then func(error) error) step {
	s := step{query: prefix + insertJobsSQL, rows: true}
	scan := func(rows stepRows) error { return scanJobSeqs(rows, jobs) }
	if len(jobs) == 1 {
		s.query, s.args = prefix+insertJobReturningSQL, append(lead, jobArgs(jobs[0])...)
		scan = func(rows stepRows) error { return scanJobSeq(rows, jobs[0]) }
	} else {
		s.args = append(lead, jobArrays(jobs)...)
	}
	s.done = func(_ int64, rows stepRows, err error) error {
		if err == nil {
			err = scan(rows)
		}
		return then(q.fail(err, "create jobs"))
	}
	return s
}

// scanJobSeq sets job's MessageID to its seq, from the row (seq) its
// insert returned.
func scanJobSeq(rows stepRows, job *push.Job) error {
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	return rows.Scan(&job.MessageID)
}

// scanJobSeqs sets the MessageID of each of jobs to its seq, from the
// rows (id, seq) their insert returned.
func scanJobSeqs(rows stepRows, jobs []*push.Job) error {
	byID := make(map[string]*push.Job, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	got := 0
	for rows.Next() {
		var (
			id  string
			seq int64
		)
		if err := rows.Scan(&id, &seq); err != nil {
			return err
		}
		if j := byID[id]; j != nil {
			j.MessageID = seq
			got++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != len(jobs) {
		return fmt.Errorf("%d of %d new jobs returned", got, len(jobs))
	}
	return nil
}

// jobArrays are jobs' values as insertJobsSQL takes them: one array per
// column.
func jobArrays(jobs []*push.Job) []any {
	n := len(jobs)
	var (
		ids, platforms, ttypes, contents, images = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		states, errs, indexes, idems             = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		accounts, bots, targets, costs           = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		created, updated, started, finished      = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		expires                                  = make([]int64, n)
		msgTypes, attempts                       = make([]int32, n), make([]int32, n)
		wakeups                                  = make([]bool, n)
	)
	for i, j := range jobs {
		r := jobToRow(j)
		ids[i], platforms[i], ttypes[i], contents[i], images[i] = r.ID, r.Platform, r.TargetType, r.Content, r.ImageURL
		states[i], errs[i], indexes[i], idems[i] = r.State, r.Error, r.PlatformIndex, r.IdemKey
		accounts[i], bots[i], targets[i], costs[i] = r.AccountID, r.BotID, r.TargetID, r.Cost
		created[i], updated[i], started[i], finished[i], expires[i] = r.CreatedMs, r.UpdatedMs, r.StartedMs, r.FinishedMs, r.ExpiresMs
		msgTypes[i], attempts[i], wakeups[i] = int32(r.MsgType), int32(r.Attempts), r.Wakeup
	}
	return []any{ids, accounts, bots, targets, platforms, ttypes, msgTypes, contents, images, wakeups,
		states, costs, attempts, errs, indexes, idems, created, updated, started, finished, expires}
}

// Job implements push.Tx.
func (q queries) Job(ctx context.Context, id string) (push.Job, error) {
	ctx = q.quick(ctx)
	st, done, err := q.stmt(ctx, false, selectJobSQL)
	if err != nil {
		return push.Job{}, q.fail(err, "read job")
	}
	defer done()
	row, err := scanJob(st.QueryRowContext(ctx, id).Scan)
	if isNoRows(err) {
		return push.Job{}, push.Errorf(push.NotFound, "job_not_found", "job %s does not exist", id)
	}
	if err != nil {
		return push.Job{}, q.fail(err, "read job")
	}
	return row.job(), nil
}

// selectJobsSQL reads jobs by an array of ids (PostgreSQL): one prepared
// statement however many there are.
const selectJobsSQL = "SELECT " + jobColumns + " FROM jobs WHERE id = ANY(?::text[])"

// jobsByID reads the rows of the jobs ids that exist.
func (q queries) jobsByID(ctx context.Context, ids []string) ([]jobRow, error) {
	var rows []jobRow
	if !q.store.dialect.batchMoves {
		err := q.r.NewSelect().Model(&rows).Where("id IN (?)", inList(ids)).Scan(ctx)
		return rows, err
	}
	st, done, err := q.stmt(ctx, false, selectJobsSQL)
	if err != nil {
		return nil, err
	}
	defer done()
	rs, err := st.QueryContext(ctx, ids)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		r, err := scanJob(rs.Scan)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, rs.Err()
}

// Jobs implements push.Tx.
func (q queries) Jobs(ctx context.Context, ids []string) ([]push.Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) == 1 {
		j, err := q.Job(ctx, ids[0])
		if err != nil {
			return nil, err
		}
		return []push.Job{j}, nil
	}
	rows, err := q.jobsByID(ctx, ids)
	if err != nil {
		return nil, q.fail(err, "read jobs")
	}
	byID := make(map[string]push.Job, len(rows))
	for _, r := range rows {
		byID[r.ID] = r.job()
	}
	out := make([]push.Job, len(ids))
	for i, id := range ids {
		j, ok := byID[id]
		if !ok {
			return nil, push.Errorf(push.NotFound, "job_not_found", "job %s does not exist", id)
		}
		out[i] = j
	}
	return out, nil
}

// MoveJob implements push.Tx. When the move carries the job as it stood
// in m.From, the moved job is built from it (the row is not read back).
func (q queries) MoveJob(ctx context.Context, m push.JobMove) (push.Job, error) {
	if !push.CanMove(m.From, m.To) {
		return push.Job{}, push.Errorf(push.Conflict, push.ReasonStateChanged, "a job cannot move from %s to %s", m.From, m.To)
	}
	mv := jobMoveArgs{id: m.ID, from: string(m.From), to: string(m.To), at: toMs(m.At),
		started: flag(m.To == push.StateRunning), finished: flag(finishes(m)), setErr: flag(m.Error != "" || m.To == push.StateSucceeded),
		errMsg: m.Error, platformIndex: m.PlatformIndex, retryMs: toMs(m.RetryAt)}
	args := mv.args()
	known := m.Job != nil && m.Job.ID == m.ID && m.Job.State == m.From && toMs(m.Job.RetryAt) == toMs(m.RetryAt)
	if known && q.moves != nil {
		// Written with the batch's other moves at its end, and checked
		// there (see moveBatch).
		q.moves.add(mv)
		return movedJob(*m.Job, m), nil
	}
	var row jobRow
	var err error
	if known {
		var res sql.Result
		if res, err = q.exec(ctx, moveJobSQL, args...); err == nil {
			if n, _ := res.RowsAffected(); n == 0 {
				err = sql.ErrNoRows
			}
		}
	} else {
		var st *sql.Stmt
		var done func()
		if st, done, err = q.stmt(ctx, true, moveJobReturningSQL); err != nil {
			return push.Job{}, q.fail(err, "move job")
		}
		row, err = scanJob(st.QueryRowContext(ctx, args...).Scan)
		done()
	}
	if isNoRows(err) {
		cur, err := q.Job(ctx, m.ID)
		if err != nil {
			return push.Job{}, err
		}
		if cur.State == m.From {
			return cur, push.Errorf(push.Conflict, push.ReasonStateChanged, "job %s is %s but was handed to a worker or back to the queue meanwhile: job state has changed", m.ID, cur.State)
		}
		return cur, push.Errorf(push.Conflict, push.ReasonStateChanged, "job %s is %s, not %s: job state has changed", m.ID, cur.State, m.From)
	}
	if err != nil {
		return push.Job{}, q.fail(err, "move job")
	}
	if known {
		return movedJob(*m.Job, m), nil
	}
	return row.job(), nil
}

// movedJob is what moveJobSQL makes of j, read back as the store reads
// rows (times in milliseconds, UTC).
func movedJob(j push.Job, m push.JobMove) push.Job {
	at := fromMs(toMs(m.At))
	j.State = m.To
	j.UpdatedAt = at
	if m.To == push.StateRunning {
		j.StartedAt = at
		j.Attempts++
	}
	if finishes(m) {
		j.FinishedAt = at
	}
	if m.Error != "" || m.To == push.StateSucceeded {
		j.Error = m.Error
	}
	if m.PlatformIndex != "" {
		j.PlatformIndex = m.PlatformIndex
	}
	j.RetryAt = time.Time{}
	for _, t := range []*time.Time{&j.CreatedAt, &j.StartedAt, &j.FinishedAt, &j.ExpiresAt} {
		*t = fromMs(toMs(*t))
	}
	return j
}

// ParkJob implements push.Tx.
func (q queries) ParkJob(ctx context.Context, id string, until, at time.Time, msg string) error {
	res, err := q.exec(ctx, parkJobSQL, toMs(until), toMs(at), msg, id)
	if err != nil {
		return q.fail(err, "park job")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		cur, err := q.Job(ctx, id)
		if err != nil {
			return err
		}
		return push.Errorf(push.Conflict, push.ReasonStateChanged, "job %s is %s and not being sent: job state has changed", id, cur.State)
	}
	return nil
}

// ResumeJob implements push.Tx.
func (q queries) ResumeJob(ctx context.Context, id string, retryAt, at time.Time) (push.Job, error) {
	var row jobRow
	err := q.queryRow(ctx, true, resumeJobSQL, []any{toMs(at), id, toMs(retryAt)}, rowDest(&row)...)
	if isNoRows(err) {
		cur, err := q.Job(ctx, id)
		if err != nil {
			return push.Job{}, err
		}
		return cur, push.Errorf(push.Conflict, push.ReasonStateChanged, "job %s was claimed by another worker or moved: job state has changed", id)
	}
	if err != nil {
		return push.Job{}, q.fail(err, "resume job")
	}
	return row.job(), nil
}

// finishes reports whether a move sets the job's finished time: its first
// settlement (a resolved uncertain job keeps the time it became uncertain).
func finishes(m push.JobMove) bool { return m.To.Settled() && m.From != push.StateUncertain }

// flag is a boolean as a statement parameter.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FindJobs implements push.Tx.
func (q queries) FindJobs(ctx context.Context, s push.State, expiredBy time.Time, limit int) ([]string, error) {
	if err := q.selectsJobs(); err != nil {
		return nil, err
	}
	sel := q.r.NewSelect().Model((*jobRow)(nil)).Column("id").Where("state = ?", string(s))
	if !expiredBy.IsZero() {
		sel = sel.Where("expires_ms <= ?", toMs(expiredBy))
	}
	sel = sel.Order("seq")
	if limit > 0 {
		sel = sel.Limit(int64(limit))
	}
	var ids []string
	if err := sel.Scan(ctx, &ids); err != nil {
		return nil, q.fail(err, "find jobs")
	}
	return ids, nil
}

// QueuedJobs implements push.Tx.
func (q queries) QueuedJobs(ctx context.Context, botID, targetID int64) ([]string, error) {
	if err := q.selectsJobs(); err != nil {
		return nil, err
	}
	sel := q.r.NewSelect().Model((*jobRow)(nil)).Column("id").Where("state = ?", string(push.StateQueued)).Where("bot_id = ?", botID)
	if targetID != 0 {
		sel = sel.Where("target_id = ?", targetID)
	}
	var ids []string
	if err := sel.Order("seq").Scan(ctx, &ids); err != nil {
		return nil, q.fail(err, "find queued jobs")
	}
	return ids, nil
}

// ListJobs implements push.Tx.
func (q queries) ListJobs(ctx context.Context, f push.JobFilter) ([]push.Job, error) {
	if err := q.selectsJobs(); err != nil {
		return nil, err
	}
	var rows []jobRow
	sel := q.r.NewSelect().Model(&rows)
	if f.AccountID != 0 {
		sel = sel.Where("account_id = ?", f.AccountID)
	}
	if f.State != "" {
		sel = sel.Where("state = ?", string(f.State))
	}
	if f.BotID != 0 {
		sel = sel.Where("bot_id = ?", f.BotID)
	}
	if f.TargetID != 0 {
		sel = sel.Where("target_id = ?", f.TargetID)
	}
	if !f.Since.IsZero() {
		sel = sel.Where("created_ms >= ?", toMs(f.Since))
	}
	if !f.Until.IsZero() {
		sel = sel.Where("created_ms < ?", toMs(f.Until))
	}
	if f.IdempotencyKey != "" {
		sel = sel.Where("idem_key = ?", f.IdempotencyKey)
	}
	if before := push.CursorID(f.Cursor); before > 0 {
		sel = sel.Where("seq < ?", before)
	}
	sel = sel.Order("seq DESC")
	if f.Limit > 0 {
		sel = sel.Limit(int64(f.Limit))
	}
	if err := sel.Scan(ctx); err != nil {
		return nil, q.fail(err, "list jobs")
	}
	out := make([]push.Job, len(rows))
	for i, r := range rows {
		out[i] = r.job()
	}
	return out, nil
}

// CountJobs implements push.Tx. It reads the index jobs_account_created.
func (q queries) CountJobs(ctx context.Context, accountID int64, since time.Time) (map[push.State]int, error) {
	if err := q.selectsJobs(); err != nil {
		return nil, err
	}
	var rows []struct {
		State string `bun:"state"`
		N     int64  `bun:"n"`
	}
	err := q.r.NewSelect().Model((*jobRow)(nil)).
		ColumnExpr("state").ColumnExpr("COUNT(*) AS n").
		Where("account_id = ?", accountID).Where("created_ms >= ?", toMs(since)).
		Group("state").
		Scan(ctx, &rows)
	if err != nil {
		return nil, q.fail(err, "count jobs")
	}
	out := make(map[push.State]int, len(rows))
	for _, r := range rows {
		out[push.State(r.State)] = int(r.N)
	}
	return out, nil
}

// ResolveJob implements push.Tx.
func (q queries) ResolveJob(ctx context.Context, id string, at time.Time, by, note string) error {
	res, err := q.w.NewUpdate().Model((*jobRow)(nil)).Set("resolved_ms = ?", toMs(at)).Set("resolved_by = ?", by).Set("note = ?", note).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return q.fail(err, "resolve job")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return push.Errorf(push.NotFound, "job_not_found", "job %s does not exist", id)
	}
	return nil
}
