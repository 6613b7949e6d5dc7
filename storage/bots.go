package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

func bunIdent(s string) bun.Ident { return bun.Ident(s) }

// CreateBot implements push.Tx.
func (q queries) CreateBot(ctx context.Context, b *push.Bot) error {
	row := botRow{AccountID: b.AccountID, Platform: b.Platform, Name: b.Name, Config: q.sealConfig(b.Config), CreatedMs: toMs(b.CreatedAt), UpdatedMs: toMs(b.UpdatedAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create bot")
	}
	b.ID = row.ID
	return nil
}

// Bot implements push.Tx.
func (q queries) Bot(ctx context.Context, id int64) (push.Bot, error) {
	var row botRow
	err := q.r.NewSelect().Model(&row).Where("id = ?", id).Where("deleted_ms = 0").Scan(ctx)
	if isNoRows(err) {
		return push.Bot{}, notFound("bot", id)
	}
	if err != nil {
		return push.Bot{}, q.fail(err, "read bot")
	}
	return q.bot(row)
}

// Bots implements push.Tx.
func (q queries) Bots(ctx context.Context, f push.BotFilter) ([]push.Bot, error) {
	var rows []botRow
	if err := page(q.r.NewSelect().Model(&rows).Where("account_id = ?", f.AccountID).Where("deleted_ms = 0"), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list bots")
	}
	out := make([]push.Bot, len(rows))
	for i, r := range rows {
		b, err := q.bot(r)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// sealConfig is the stored form of a bot config: sealed when the store has
// a Sealer.
func (q queries) sealConfig(config []byte) string {
	if q.store.sealer == nil {
		return string(config)
	}
	return q.store.sealer.Seal(config)
}

// bot converts a row, opening its sealed config.
func (q queries) bot(r botRow) (push.Bot, error) {
	b := r.bot()
	if q.store.sealer == nil {
		if _, _, sealed := splitSealed(r.Config); sealed {
			return push.Bot{}, push.Errorf(push.Internal, "sealed_config", "bot %d has sealed credentials but no secret key is configured", r.ID)
		}
		return b, nil
	}
	plain, err := q.store.sealer.Open(r.Config)
	if err != nil {
		return push.Bot{}, &push.Error{Kind: push.Internal, Reason: "sealed_config", Message: fmt.Sprintf("bot %d: %v", r.ID, err), Err: err}
	}
	b.Config = plain
	return b, nil
}

// CreateTarget implements push.Tx.
func (q queries) CreateTarget(ctx context.Context, t *push.Target) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		// An unbound target of the same address is bound again.
		var old targetRow
		err := q.w.NewSelect().Model(&old).Where("bot_id = ?", t.BotID).Where("type = ?", string(t.Type)).Where("address = ?", t.Address).Scan(ctx)
		switch {
		case err == nil && old.UnboundMs == 0:
			return &push.Error{Kind: push.Conflict, Reason: push.ReasonDuplicate, Message: "a row with this key already exists"}
		case err == nil:
			if _, err := q.w.NewUpdate().Model((*targetRow)(nil)).Set("unbound_ms = 0").Set("name = ?", t.Name).
				Set("presence = ?", string(push.PresenceActive)).Set("presence_ms = 0").Set("presence_note = ''").Where("id = ?", old.ID).Exec(ctx); err != nil {
				return q.fail(err, "bind target again")
			}
			t.ID, t.CreatedAt, t.Presence, t.PresenceAt, t.PresenceNote = old.ID, fromMs(old.CreatedMs), push.PresenceActive, time.Time{}, ""
			return q.bumpCatalogEpoch(ctx)
		case !isNoRows(err):
			return q.fail(err, "read target")
		}
		row := targetRow{BotID: t.BotID, Type: string(t.Type), Address: t.Address, Name: t.Name, CreatedMs: toMs(t.CreatedAt), Presence: string(push.PresenceActive)}
		if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
			return q.fail(err, "create target")
		}
		t.ID, t.Presence, t.PresenceAt, t.PresenceNote = row.ID, push.PresenceActive, time.Time{}, ""
		return nil
	})
}

// UpdateBot implements push.Tx.
func (q queries) UpdateBot(ctx context.Context, b push.Bot, config bool) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		up := q.w.NewUpdate().Model((*botRow)(nil)).Set("name = ?", b.Name).Set("updated_ms = ?", toMs(b.UpdatedAt))
		if config {
			up = up.Set("config = ?", q.sealConfig(b.Config))
		}
		res, err := up.Where("id = ?", b.ID).Where("deleted_ms = 0").Exec(ctx)
		if err != nil {
			return q.fail(err, "update bot")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("bot", b.ID)
		}
		return q.bumpCatalogEpoch(ctx)
	})
}

// DeleteBot implements push.Tx.
func (q queries) DeleteBot(ctx context.Context, id int64, at time.Time) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		if err := q.closeBacklog(ctx, id); err != nil {
			return err
		}
		res, err := q.w.NewUpdate().Model((*botRow)(nil)).Set("deleted_ms = ?", toMs(at)).Set("updated_ms = ?", toMs(at)).
			Set("config = ?", "{}").Where("id = ?", id).Where("deleted_ms = 0").Exec(ctx)
		if err != nil {
			return q.fail(err, "delete bot")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("bot", id)
		}
		return q.bumpCatalogEpoch(ctx)
	})
}

// UpdateTarget implements push.Tx.
func (q queries) UpdateTarget(ctx context.Context, t push.Target) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*targetRow)(nil)).Set("name = ?", t.Name).Where("id = ?", t.ID).Where("unbound_ms = 0").Exec(ctx)
		if err != nil {
			return q.fail(err, "update target")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("target", t.ID)
		}
		return q.bumpCatalogEpoch(ctx)
	})
}

// UnbindTarget implements push.Tx.
func (q queries) UnbindTarget(ctx context.Context, id int64, at time.Time) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*targetRow)(nil)).Set("unbound_ms = ?", toMs(at)).Where("id = ?", id).Where("unbound_ms = 0").Exec(ctx)
		if err != nil {
			return q.fail(err, "unbind target")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("target", id)
		}
		return q.bumpCatalogEpoch(ctx)
	})
}

// Target implements push.Tx.
func (q queries) Target(ctx context.Context, id int64) (push.Target, error) {
	var row targetRow
	err := q.r.NewSelect().Model(&row).Where("id = ?", id).Where("unbound_ms = 0").Scan(ctx)
	if isNoRows(err) {
		return push.Target{}, notFound("target", id)
	}
	if err != nil {
		return push.Target{}, q.fail(err, "read target")
	}
	return row.target(), nil
}

// Targets implements push.Tx.
func (q queries) Targets(ctx context.Context, f push.TargetFilter) ([]push.Target, error) {
	var rows []targetRow
	if err := page(q.r.NewSelect().Model(&rows).Where("bot_id = ?", f.BotID).Where("unbound_ms = 0"), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list targets")
	}
	out := make([]push.Target, len(rows))
	for i, r := range rows {
		out[i] = r.target()
	}
	return out, nil
}
