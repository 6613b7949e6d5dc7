package storage

import (
	"context"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

func bunIdent(s string) bun.Ident { return bun.Ident(s) }

// CreateBot implements push.Tx.
func (q queries) CreateBot(ctx context.Context, b *push.Bot) error {
	row := botRow{AccountID: b.AccountID, Platform: b.Platform, Name: b.Name, Config: string(b.Config), CreatedMs: toMs(b.CreatedAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create bot")
	}
	b.ID = row.ID
	return nil
}

// Bot implements push.Tx.
func (q queries) Bot(ctx context.Context, id int64) (push.Bot, error) {
	var row botRow
	err := q.r.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if isNoRows(err) {
		return push.Bot{}, notFound("bot", id)
	}
	if err != nil {
		return push.Bot{}, q.fail(err, "read bot")
	}
	return row.bot(), nil
}

// Bots implements push.Tx.
func (q queries) Bots(ctx context.Context, accountID int64) ([]push.Bot, error) {
	var rows []botRow
	if err := q.r.NewSelect().Model(&rows).Where("account_id = ?", accountID).Order("id").Scan(ctx); err != nil {
		return nil, q.fail(err, "list bots")
	}
	out := make([]push.Bot, len(rows))
	for i, r := range rows {
		out[i] = r.bot()
	}
	return out, nil
}

// CreateTarget implements push.Tx.
func (q queries) CreateTarget(ctx context.Context, t *push.Target) error {
	row := targetRow{BotID: t.BotID, Type: string(t.Type), Address: t.Address, Name: t.Name, CreatedMs: toMs(t.CreatedAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create target")
	}
	t.ID = row.ID
	return nil
}

// Target implements push.Tx.
func (q queries) Target(ctx context.Context, id int64) (push.Target, error) {
	var row targetRow
	err := q.r.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if isNoRows(err) {
		return push.Target{}, notFound("target", id)
	}
	if err != nil {
		return push.Target{}, q.fail(err, "read target")
	}
	return row.target(), nil
}

// Targets implements push.Tx.
func (q queries) Targets(ctx context.Context, botID int64) ([]push.Target, error) {
	var rows []targetRow
	if err := q.r.NewSelect().Model(&rows).Where("bot_id = ?", botID).Order("id").Scan(ctx); err != nil {
		return nil, q.fail(err, "list targets")
	}
	out := make([]push.Target, len(rows))
	for i, r := range rows {
		out[i] = r.target()
	}
	return out, nil
}
