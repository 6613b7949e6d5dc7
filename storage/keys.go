package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// CreateAPIKey implements push.Tx.
func (q queries) CreateAPIKey(ctx context.Context, k *push.APIKey) error {
	row := apiKeyRow{
		AccountID: k.AccountID, Name: k.Name, Role: string(k.Role), UserID: k.UserID, Prefix: k.Prefix, Hash: k.Hash, Hint: k.Hint,
		CreatedMs: toMs(k.CreatedAt), ExpiresMs: toMs(k.ExpiresAt), RevokedMs: toMs(k.RevokedAt),
	}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		if push.ReasonOf(q.fail(err, "")) == push.ReasonDuplicate {
			return push.Errorf(push.Conflict, "key_exists", "this API key is already stored")
		}
		return q.fail(err, "create API key")
	}
	k.ID = row.ID
	return nil
}

func (q queries) keyWhere(ctx context.Context, col string, v any) (push.APIKey, error) {
	var row apiKeyRow
	err := q.r.NewSelect().Model(&row).Where("? = ?", bunIdent(col), v).Scan(ctx)
	if isNoRows(err) {
		return push.APIKey{}, notFound("api_key", v)
	}
	if err != nil {
		return push.APIKey{}, q.fail(err, "read API key")
	}
	return row.key(), nil
}

// APIKeyByHash implements push.Tx.
func (q queries) APIKeyByHash(ctx context.Context, hash string) (push.APIKey, error) {
	k, err := q.keyWhere(ctx, "hash", hash)
	if push.IsKind(err, push.NotFound) {
		return k, push.Errorf(push.NotFound, "api_key_not_found", "no such API key")
	}
	return k, err
}

// APIKey implements push.Tx.
func (q queries) APIKey(ctx context.Context, id int64) (push.APIKey, error) {
	return q.keyWhere(ctx, "id", id)
}

// APIKeys implements push.Tx.
func (q queries) APIKeys(ctx context.Context, f push.KeyFilter) ([]push.APIKey, error) {
	var rows []apiKeyRow
	if err := page(q.r.NewSelect().Model(&rows).Where("account_id = ?", f.AccountID), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list API keys")
	}
	out := make([]push.APIKey, len(rows))
	for i, r := range rows {
		out[i] = r.key()
	}
	return out, nil
}

// RevokeAPIKey implements push.Tx. The revocation counts in the auth
// epoch, so that engines caching the key see it at once.
func (q queries) RevokeAPIKey(ctx context.Context, id int64, at time.Time) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*apiKeyRow)(nil)).Set("revoked_ms = ?", toMs(at)).Where("id = ?", id).Where("revoked_ms = 0").Exec(ctx)
		if err != nil {
			return q.fail(err, "revoke API key")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			_, err := q.APIKey(ctx, id)
			return err
		}
		return q.bumpAuthEpoch(ctx)
	})
}
