package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

func inList(ids []string) any { return bun.List(ids) }

// The statements of the idempotency records, prepared once.
const (
	selectIdempotencySQL = "SELECT kind, fingerprint, job_ids, created_ms FROM idempotency WHERE account_id = ? AND idem_key = ?"
	insertIdempotencySQL = "INSERT INTO idempotency (account_id, idem_key, kind, fingerprint, job_ids, created_ms) VALUES (?, ?, ?, ?, ?, ?)"
)

// Idempotency implements push.Tx.
func (q queries) Idempotency(ctx context.Context, accountID int64, key string) (push.IdempotencyRecord, error) {
	row := idempotencyRow{AccountID: accountID, IdemKey: key}
	err := q.queryRow(q.quick(ctx), false, selectIdempotencySQL, []any{accountID, key}, &row.Kind, &row.Fingerprint, &row.JobIDs, &row.CreatedMs)
	if isNoRows(err) {
		return push.IdempotencyRecord{}, push.Errorf(push.NotFound, "idempotency_key_not_found", "no request was made with this Idempotency-Key")
	}
	if err != nil {
		return push.IdempotencyRecord{}, q.fail(err, "read idempotency record")
	}
	return row.record(), nil
}

// CreateIdempotency implements push.Tx.
func (q queries) CreateIdempotency(ctx context.Context, r *push.IdempotencyRecord) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		if _, err := q.exec(ctx, insertIdempotencySQL, idempotencyArgs(r)...); err != nil {
			return q.fail(err, "create idempotency record")
		}
		return nil
	})
}

// idempotencyArgs are a record's values as insertIdempotencySQL takes them.
func idempotencyArgs(r *push.IdempotencyRecord) []any {
	row := idempotencyToRow(r)
	return []any{row.AccountID, row.IdemKey, row.Kind, row.Fingerprint, row.JobIDs, row.CreatedMs}
}

// DeleteIdempotencyBefore implements push.Tx.
func (q queries) DeleteIdempotencyBefore(ctx context.Context, t time.Time, limit int) (int64, error) {
	res, err := q.w.NewRaw("DELETE FROM idempotency WHERE (account_id, idem_key) IN (SELECT account_id, idem_key FROM idempotency WHERE created_ms < ? ORDER BY created_ms LIMIT ?)", toMs(t), limit).Exec(ctx)
	if err != nil {
		return 0, q.fail(err, "delete idempotency records")
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// inList64 is a list of integer ids for an IN (?) clause.
func inList64(ids []int64) any { return bun.List(ids) }
