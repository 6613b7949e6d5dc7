package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// CreateInvite implements push.Tx.
func (q queries) CreateInvite(ctx context.Context, i *push.Invite) error {
	row := inviteRow{CodeHash: i.CodeHash, Hint: i.Hint, AccountID: i.AccountID, Role: string(i.Role), Email: i.Email,
		CreatedBy: i.CreatedBy, CreatedMs: toMs(i.CreatedAt), ExpiresMs: toMs(i.ExpiresAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create invite")
	}
	i.ID = row.ID
	return nil
}

func (q queries) inviteWhere(ctx context.Context, col string, v any) (push.Invite, error) {
	var row inviteRow
	err := q.r.NewSelect().Model(&row).Where("? = ?", bunIdent(col), v).Scan(ctx)
	if isNoRows(err) {
		return push.Invite{}, push.Errorf(push.NotFound, "invite_not_found", "no such invite")
	}
	if err != nil {
		return push.Invite{}, q.fail(err, "read invite")
	}
	return row.invite(), nil
}

// Invite implements push.Tx.
func (q queries) Invite(ctx context.Context, id int64) (push.Invite, error) {
	return q.inviteWhere(ctx, "id", id)
}

// InviteByHash implements push.Tx.
func (q queries) InviteByHash(ctx context.Context, hash string) (push.Invite, error) {
	return q.inviteWhere(ctx, "code_hash", hash)
}

// Invites implements push.Tx.
func (q queries) Invites(ctx context.Context, f push.InviteFilter) ([]push.Invite, error) {
	var rows []inviteRow
	sel := q.r.NewSelect().Model(&rows)
	if f.AccountID != 0 {
		sel = sel.Where("account_id = ?", f.AccountID)
	}
	if err := page(sel, f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list invites")
	}
	out := make([]push.Invite, len(rows))
	for i, r := range rows {
		out[i] = r.invite()
	}
	return out, nil
}

// UseInvite implements push.Tx: the update is a compare-and-set, so that
// one invite makes one user however many use it at once.
func (q queries) UseInvite(ctx context.Context, id, userID int64, at time.Time) error {
	res, err := q.w.NewUpdate().Model((*inviteRow)(nil)).Set("used_ms = ?", toMs(at)).Set("used_by = ?", userID).
		Where("id = ?", id).Where("used_ms = 0").Where("revoked_ms = 0").Where("expires_ms > ?", toMs(at)).Exec(ctx)
	if err != nil {
		return q.fail(err, "use invite")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return push.Errorf(push.Conflict, "invalid_invite", "the invite code was used, revoked or expired meanwhile: ask for a new one")
	}
	return nil
}

// RevokeInvite implements push.Tx.
func (q queries) RevokeInvite(ctx context.Context, id int64, at time.Time) error {
	if _, err := q.w.NewUpdate().Model((*inviteRow)(nil)).Set("revoked_ms = ?", toMs(at)).Where("id = ?", id).Where("revoked_ms = 0").Exec(ctx); err != nil {
		return q.fail(err, "revoke invite")
	}
	return nil
}
