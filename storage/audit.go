package storage

import (
	"context"

	"github.com/heraldpush/herald/push"
)

// CreateAudit implements push.Tx.
func (q queries) CreateAudit(ctx context.Context, a *push.AuditEntry) error {
	row := auditRow{AccountID: a.AccountID, Actor: a.Actor, ActorUser: a.ActorUserID, ActorKey: a.ActorKeyID, Action: a.Action,
		Object: a.Object, Address: a.Address, CreatedMs: toMs(a.At)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "record audit entry")
	}
	a.ID = row.ID
	return nil
}

// AuditLog implements push.Tx.
func (q queries) AuditLog(ctx context.Context, f push.AuditFilter) ([]push.AuditEntry, error) {
	var rows []auditRow
	sel := q.r.NewSelect().Model(&rows)
	if f.AccountID != 0 {
		sel = sel.Where("account_id = ?", f.AccountID)
	}
	if err := page(sel, f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "read audit trail")
	}
	out := make([]push.AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = r.entry()
	}
	return out, nil
}
