package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// CreateSession implements push.Tx.
func (q queries) CreateSession(ctx context.Context, s *push.Session) error {
	row := sessionRow{UserID: s.UserID, AccountID: s.AccountID, TokenHash: s.TokenHash, CreatedMs: toMs(s.CreatedAt),
		SeenMs: toMs(s.SeenAt), ExpiresMs: toMs(s.ExpiresAt), Address: s.Address, Agent: s.Agent}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create session")
	}
	s.ID = row.ID
	return nil
}

func (q queries) sessionWhere(ctx context.Context, col string, v any) (push.Session, error) {
	var row sessionRow
	err := q.r.NewSelect().Model(&row).Where("? = ?", bunIdent(col), v).Scan(ctx)
	if isNoRows(err) {
		return push.Session{}, push.Errorf(push.NotFound, "session_not_found", "no such session")
	}
	if err != nil {
		return push.Session{}, q.fail(err, "read session")
	}
	return row.session(), nil
}

// Session implements push.Tx.
func (q queries) Session(ctx context.Context, id int64) (push.Session, error) {
	return q.sessionWhere(ctx, "id", id)
}

// SessionByHash implements push.Tx.
func (q queries) SessionByHash(ctx context.Context, hash string) (push.Session, error) {
	return q.sessionWhere(ctx, "token_hash", hash)
}

// Sessions implements push.Tx.
func (q queries) Sessions(ctx context.Context, f push.SessionFilter) ([]push.Session, error) {
	var rows []sessionRow
	if err := page(q.r.NewSelect().Model(&rows).Where("user_id = ?", f.UserID), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list sessions")
	}
	out := make([]push.Session, len(rows))
	for i, r := range rows {
		out[i] = r.session()
	}
	return out, nil
}

// TouchSession implements push.Tx.
func (q queries) TouchSession(ctx context.Context, id int64, at time.Time) error {
	if _, err := q.w.NewUpdate().Model((*sessionRow)(nil)).Set("seen_ms = ?", toMs(at)).Where("id = ?", id).Exec(ctx); err != nil {
		return q.fail(err, "touch session")
	}
	return nil
}

// RevokeSessions implements push.Tx.
func (q queries) RevokeSessions(ctx context.Context, r push.SessionRevoke, at time.Time) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		up := q.w.NewUpdate().Model((*sessionRow)(nil)).Set("revoked_ms = ?", toMs(at)).Where("revoked_ms = 0")
		switch {
		case r.ID != 0:
			up = up.Where("id = ?", r.ID)
		case r.UserID != 0:
			up = up.Where("user_id = ?", r.UserID)
			if r.Except != 0 {
				up = up.Where("id <> ?", r.Except)
			}
		default:
			return nil
		}
		if _, err := up.Exec(ctx); err != nil {
			return q.fail(err, "revoke sessions")
		}
		return q.bumpAuthEpoch(ctx)
	})
}
