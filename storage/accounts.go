package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// CreateAccount implements push.Tx.
func (q queries) CreateAccount(ctx context.Context, a *push.Account) error {
	row := accountRow{Name: a.Name, Status: string(a.Status), Points: a.Points, CreatedMs: toMs(a.CreatedAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create account")
	}
	a.ID = row.ID
	return nil
}

// Account implements push.Tx.
func (q queries) Account(ctx context.Context, id int64) (push.Account, error) {
	var row accountRow
	err := q.r.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if isNoRows(err) {
		return push.Account{}, notFound("account", id)
	}
	if err != nil {
		return push.Account{}, q.fail(err, "read account")
	}
	return row.account(), nil
}

// Accounts implements push.Tx.
func (q queries) Accounts(ctx context.Context, f push.AccountFilter) ([]push.Account, error) {
	var rows []accountRow
	if err := page(q.r.NewSelect().Model(&rows), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list accounts")
	}
	out := make([]push.Account, len(rows))
	for i, r := range rows {
		out[i] = r.account()
	}
	return out, nil
}

// SetAccountStatus implements push.Tx. The change counts in the auth
// epoch, so that engines caching the account's keys see it at once.
func (q queries) SetAccountStatus(ctx context.Context, id int64, s push.AccountStatus) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*accountRow)(nil)).Set("status = ?", string(s)).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return q.fail(err, "set account status")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("account", id)
		}
		return q.bumpAuthEpoch(ctx)
	})
}

// SetPoints implements push.Tx.
func (q queries) SetPoints(ctx context.Context, id int64, balance int64, at time.Time) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		// The row is locked for the read, so that the ledger records the
		// difference from the balance actually replaced.
		var row accountRow
		sel := q.w.NewSelect().Model(&row).Where("id = ?", id)
		if q.store.dialect.lockReads {
			sel = sel.For("UPDATE")
		}
		err := sel.Scan(ctx)
		if isNoRows(err) {
			return notFound("account", id)
		}
		if err != nil {
			return q.fail(err, "read account")
		}
		a := row.account()
		if _, err := q.w.NewUpdate().Model((*accountRow)(nil)).Set("points = ?", balance).Where("id = ?", id).Exec(ctx); err != nil {
			return q.fail(err, "set points")
		}
		if delta := balance - a.Points; delta != 0 {
			row := ledgerToRow(push.LedgerEntry{AccountID: id, Kind: push.LedgerAdjust, Amount: delta, At: at})
			if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
				return q.fail(err, "record points adjustment")
			}
		}
		return nil
	})
}

// The statements of a charge, prepared once.
const (
	chargeSQL       = "UPDATE accounts SET points = points - ? WHERE id = ? AND points >= ?"
	insertLedgerSQL = "INSERT INTO points_ledger (account_id, job_id, kind, amount, created_ms) VALUES (?, ?, ?, ?, ?)"
)

// Charge implements push.Tx.
func (q queries) Charge(ctx context.Context, accountID int64, entries []push.LedgerEntry) error {
	var total int64
	for _, e := range entries {
		total -= e.Amount
	}
	if total <= 0 {
		return nil
	}
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.exec(ctx, chargeSQL, total, accountID, total)
		if err != nil {
			return q.fail(err, "charge points")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			a, err := q.Account(ctx, accountID)
			if err != nil {
				return err
			}
			return push.Errorf(push.Invalid, "insufficient_points", "insufficient points: the account has %d points and this request needs %d; nothing was sent or charged", a.Points, total)
		}
		for _, e := range entries {
			r := ledgerToRow(e)
			if _, err := q.exec(ctx, insertLedgerSQL, r.AccountID, r.JobID, r.Kind, r.Amount, r.CreatedMs); err != nil {
				return q.fail(err, "record charges")
			}
		}
		return nil
	})
}

// Refund implements push.Tx.
func (q queries) Refund(ctx context.Context, e push.LedgerEntry) (bool, error) {
	var refunded bool
	err := q.atomic(ctx, func(ctx context.Context, q queries) error {
		row := ledgerToRow(e)
		res, err := q.w.NewInsert().Model(&row).On("CONFLICT (job_id, kind) DO NOTHING").Exec(ctx)
		if err != nil {
			return q.fail(err, "record refund")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // refunded before
		}
		if _, err := q.w.NewUpdate().Model((*accountRow)(nil)).Set("points = points + ?", e.Amount).Where("id = ?", e.AccountID).Exec(ctx); err != nil {
			return q.fail(err, "refund points")
		}
		refunded = true
		return nil
	})
	return refunded, err
}

// Ledger implements push.Tx.
func (q queries) Ledger(ctx context.Context, f push.LedgerFilter) ([]push.LedgerEntry, error) {
	var rows []ledgerRow
	if err := page(q.r.NewSelect().Model(&rows).Where("account_id = ?", f.AccountID), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "read ledger")
	}
	out := make([]push.LedgerEntry, len(rows))
	for i, r := range rows {
		out[i] = r.entry()
	}
	return out, nil
}

// RenameAccount implements push.Tx.
func (q queries) RenameAccount(ctx context.Context, id int64, name string) error {
	res, err := q.w.NewUpdate().Model((*accountRow)(nil)).Set("name = ?", name).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return q.fail(err, "rename account")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("account", id)
	}
	return nil
}

// GrantInitial implements push.Tx: the ledger's unique index of initial
// rows lets one of concurrent first sign-ins (on any node) insert it; the
// others change nothing.
func (q queries) GrantInitial(ctx context.Context, e push.LedgerEntry) (bool, error) {
	var granted bool
	err := q.atomic(ctx, func(ctx context.Context, q queries) error {
		granted = false
		row := ledgerToRow(e)
		row.Kind = string(push.LedgerInitial)
		res, err := q.w.NewInsert().Model(&row).On("CONFLICT (account_id) WHERE kind = 'initial' DO NOTHING").Exec(ctx)
		if err != nil {
			return q.fail(err, "record initial points")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if _, err := q.w.NewUpdate().Model((*accountRow)(nil)).Set("points = points + ?", e.Amount).Where("id = ?", e.AccountID).Exec(ctx); err != nil {
			return q.fail(err, "grant initial points")
		}
		granted = true
		return nil
	})
	return granted, err
}

// Grant implements push.Tx.
func (q queries) Grant(ctx context.Context, e push.LedgerEntry) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*accountRow)(nil)).Set("points = points + ?", e.Amount).
			Where("id = ?", e.AccountID).Where("points + ? >= 0", e.Amount).Exec(ctx)
		if err != nil {
			return q.fail(err, "grant points")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			a, err := q.Account(ctx, e.AccountID)
			if err != nil {
				return err
			}
			return push.Errorf(push.Invalid, "insufficient_points", "the account has %d points: deducting %d would take it below zero", a.Points, -e.Amount)
		}
		row := ledgerToRow(e)
		if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
			return q.fail(err, "record the grant")
		}
		return nil
	})
}
