package storage

import (
	"context"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

func inList(ids []string) any { return bun.List(ids) }

// Idempotency implements push.Tx.
func (q queries) Idempotency(ctx context.Context, accountID int64, key string) (push.IdempotencyRecord, error) {
	var row idempotencyRow
	err := q.r.NewSelect().Model(&row).Where("account_id = ?", accountID).Where("idem_key = ?", key).Scan(ctx)
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
	row := idempotencyRow{
		AccountID: r.AccountID, IdemKey: r.Key, Kind: string(r.Kind), Fingerprint: r.Fingerprint,
		JobIDs: strings.Join(r.JobIDs, ","), CreatedMs: toMs(r.CreatedAt),
	}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create idempotency record")
	}
	return nil
}

// DeleteIdempotencyBefore implements push.Tx.
func (q queries) DeleteIdempotencyBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := q.w.NewDelete().Model((*idempotencyRow)(nil)).Where("created_ms < ?", toMs(t)).Exec(ctx)
	if err != nil {
		return 0, q.fail(err, "delete idempotency records")
	}
	n, _ := res.RowsAffected()
	return n, nil
}
