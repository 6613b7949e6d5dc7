package storage

import (
	"context"

	"github.com/heraldpush/herald/push"
)

// The statements of the auth epoch (see its migration) and of the catalog
// epoch (row 2 of the same table), prepared once.
const (
	selectAuthEpochSQL    = "SELECT n FROM auth_epoch WHERE id = 1"
	bumpAuthEpochSQL      = "UPDATE auth_epoch SET n = n + 1 WHERE id = 1"
	selectCatalogEpochSQL = "SELECT n FROM auth_epoch WHERE id = 2"
	bumpCatalogEpochSQL   = "UPDATE auth_epoch SET n = n + 1 WHERE id = 2"
)

var (
	_ push.AuthEpocher    = (*Store)(nil)
	_ push.CatalogEpocher = queries{}
)

// AuthEpoch implements push.AuthEpocher: the counter of revocations and
// account status changes.
func (q queries) AuthEpoch(ctx context.Context) (int64, error) {
	var n int64
	if err := q.queryRow(q.quick(ctx), false, selectAuthEpochSQL, nil, &n); err != nil {
		return 0, q.fail(err, "read auth epoch")
	}
	return n, nil
}

// bumpAuthEpoch counts one change that may end a key's validity; it runs
// in the transaction of the change.
func (q queries) bumpAuthEpoch(ctx context.Context) error {
	if _, err := q.exec(ctx, bumpAuthEpochSQL); err != nil {
		return q.fail(err, "count auth change")
	}
	return nil
}

// CatalogEpoch implements push.CatalogEpocher: the counter of changes to
// bots and targets.
func (q queries) CatalogEpoch(ctx context.Context) (int64, error) {
	var n int64
	if err := q.queryRow(q.quick(ctx), false, selectCatalogEpochSQL, nil, &n); err != nil {
		return 0, q.fail(err, "read catalog epoch")
	}
	return n, nil
}

// bumpCatalogEpoch counts one change to a bot or a target; it runs in the
// transaction of the change.
func (q queries) bumpCatalogEpoch(ctx context.Context) error {
	if _, err := q.exec(ctx, bumpCatalogEpochSQL); err != nil {
		return q.fail(err, "count catalog change")
	}
	return nil
}
