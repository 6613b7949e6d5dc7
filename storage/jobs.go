package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// CreateJobs implements push.Tx.
func (q queries) CreateJobs(ctx context.Context, jobs []*push.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	rows := make([]jobRow, len(jobs))
	for i, j := range jobs {
		rows[i] = jobToRow(j)
		rows[i].Seq = 0
	}
	if _, err := q.w.NewInsert().Model(&rows).Returning("seq").Exec(ctx); err != nil {
		return q.fail(err, "create jobs")
	}
	for i, j := range jobs {
		j.MessageID = rows[i].Seq
	}
	return nil
}

// Job implements push.Tx.
func (q queries) Job(ctx context.Context, id string) (push.Job, error) {
	var row jobRow
	err := q.r.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if isNoRows(err) {
		return push.Job{}, push.Errorf(push.NotFound, "job_not_found", "job %s does not exist", id)
	}
	if err != nil {
		return push.Job{}, q.fail(err, "read job")
	}
	return row.job(), nil
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
	var rows []jobRow
	if err := q.r.NewSelect().Model(&rows).Where("id IN (?)", inList(ids)).Scan(ctx); err != nil {
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

// MoveJob implements push.Tx.
func (q queries) MoveJob(ctx context.Context, m push.JobMove) (push.Job, error) {
	if !push.CanMove(m.From, m.To) {
		return push.Job{}, push.Errorf(push.Conflict, push.ReasonStateChanged, "a job cannot move from %s to %s", m.From, m.To)
	}
	at := toMs(m.At)
	upd := q.w.NewUpdate().Model((*jobRow)(nil)).
		Set("state = ?", string(m.To)).
		Set("updated_ms = ?", at).
		Where("id = ?", m.ID).
		Where("state = ?", string(m.From))
	if m.To == push.Running {
		upd = upd.Set("started_ms = ?", at).Set("attempts = attempts + 1")
	}
	if m.To.Settled() {
		upd = upd.Set("finished_ms = ?", at)
	}
	if m.Error != "" || m.To == push.Succeeded {
		upd = upd.Set("error = ?", m.Error)
	}
	if m.PlatformIndex != "" {
		upd = upd.Set("platform_index = ?", m.PlatformIndex)
	}
	var row jobRow
	err := upd.Returning("*").Scan(ctx, &row)
	if isNoRows(err) {
		cur, err := q.Job(ctx, m.ID)
		if err != nil {
			return push.Job{}, err
		}
		return cur, push.Errorf(push.Conflict, push.ReasonStateChanged, "job %s is %s, not %s: job state has changed", m.ID, cur.State, m.From)
	}
	if err != nil {
		return push.Job{}, q.fail(err, "move job")
	}
	return row.job(), nil
}

// FindJobs implements push.Tx.
func (q queries) FindJobs(ctx context.Context, s push.State, expiredBy time.Time, limit int) ([]string, error) {
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
