package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// CreateUser implements push.Tx.
func (q queries) CreateUser(ctx context.Context, u *push.User) error {
	row := userRow{AccountID: u.AccountID, Email: u.Email, Password: u.PasswordHash, Role: string(u.Role),
		CreatedMs: toMs(u.CreatedAt), PasswordMs: toMs(u.PasswordChangedAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create user")
	}
	u.ID = row.ID
	return nil
}

func (q queries) userWhere(ctx context.Context, col string, v any) (push.User, error) {
	var row userRow
	err := q.r.NewSelect().Model(&row).Where("? = ?", bunIdent(col), v).Scan(ctx)
	if isNoRows(err) {
		return push.User{}, notFound("user", v)
	}
	if err != nil {
		return push.User{}, q.fail(err, "read user")
	}
	return row.user(), nil
}

// User implements push.Tx.
func (q queries) User(ctx context.Context, id int64) (push.User, error) {
	return q.userWhere(ctx, "id", id)
}

// UserByEmail implements push.Tx.
func (q queries) UserByEmail(ctx context.Context, email string) (push.User, error) {
	u, err := q.userWhere(ctx, "email", email)
	if push.IsKind(err, push.NotFound) {
		return u, push.Errorf(push.NotFound, "user_not_found", "no user has this email")
	}
	return u, err
}

// Users implements push.Tx.
func (q queries) Users(ctx context.Context, f push.UserFilter) ([]push.User, error) {
	var rows []userRow
	sel := q.r.NewSelect().Model(&rows)
	if f.AccountID != 0 {
		sel = sel.Where("account_id = ?", f.AccountID)
	}
	if err := page(sel, f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list users")
	}
	out := make([]push.User, len(rows))
	for i, r := range rows {
		out[i] = r.user()
	}
	return out, nil
}

// CountUsers implements push.Tx.
func (q queries) CountUsers(ctx context.Context, role push.Role) (int, error) {
	n, err := q.r.NewSelect().Model((*userRow)(nil)).Where("role = ?", string(role)).Count(ctx)
	if err != nil {
		return 0, q.fail(err, "count users")
	}
	return int(n), nil
}

// DeleteUser implements push.Tx.
func (q queries) DeleteUser(ctx context.Context, id int64) error {
	res, err := q.w.NewDelete().Model((*userRow)(nil)).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return q.fail(err, "delete user")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("user", id)
	}
	return nil
}

// SetPassword implements push.Tx.
func (q queries) SetPassword(ctx context.Context, userID int64, hash string, at time.Time) error {
	res, err := q.w.NewUpdate().Model((*userRow)(nil)).Set("password = ?", hash).Set("password_ms = ?", toMs(at)).Where("id = ?", userID).Exec(ctx)
	if err != nil {
		return q.fail(err, "set password")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("user", userID)
	}
	return nil
}

// SetSignedIn implements push.Tx.
func (q queries) SetSignedIn(ctx context.Context, userID int64, at time.Time) error {
	if _, err := q.w.NewUpdate().Model((*userRow)(nil)).Set("signin_ms = ?", toMs(at)).Where("id = ?", userID).Exec(ctx); err != nil {
		return q.fail(err, "record sign-in")
	}
	return nil
}
