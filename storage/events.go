package storage

import (
	"context"
	"time"

	"github.com/heraldpush/herald/push"
)

// TargetByAddress implements push.Tx.
func (q queries) TargetByAddress(ctx context.Context, botID int64, tt push.TargetType, address string) (push.Target, error) {
	var row targetRow
	err := q.r.NewSelect().Model(&row).Where("bot_id = ?", botID).Where("type = ?", string(tt)).Where("address = ?", address).
		Where("unbound_ms = 0").Scan(ctx)
	if isNoRows(err) {
		return push.Target{}, push.Errorf(push.NotFound, "target_not_found", "no target of bot %d has this address", botID)
	}
	if err != nil {
		return push.Target{}, q.fail(err, "read target")
	}
	return row.target(), nil
}

// SetPresence implements push.Tx.
func (q queries) SetPresence(ctx context.Context, targetID int64, p push.Presence, at time.Time, note string) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*targetRow)(nil)).Set("presence = ?", string(p)).Set("presence_ms = ?", toMs(at)).
			Set("presence_note = ?", note).Where("id = ?", targetID).Exec(ctx)
		if err != nil {
			return q.fail(err, "set presence")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("target", targetID)
		}
		return q.bumpCatalogEpoch(ctx)
	})
}

// MoveTarget implements push.Tx.
func (q queries) MoveTarget(ctx context.Context, targetID int64, address string) error {
	return q.atomic(ctx, func(ctx context.Context, q queries) error {
		res, err := q.w.NewUpdate().Model((*targetRow)(nil)).Set("address = ?", address).Where("id = ?", targetID).Exec(ctx)
		if err != nil {
			return q.fail(err, "move target")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("target", targetID)
		}
		return q.bumpCatalogEpoch(ctx)
	})
}

// TargetCounts implements push.Tx.
func (q queries) TargetCounts(ctx context.Context, botID int64, now time.Time, rule func(push.TargetType) push.ReplyRule, replies bool) (push.TargetCounts, error) {
	var rows []targetRow
	if err := q.r.NewSelect().Model(&rows).Column("id", "type", "presence").Where("bot_id = ?", botID).Where("unbound_ms = 0").Scan(ctx); err != nil {
		return push.TargetCounts{}, q.fail(err, "count targets")
	}
	var c push.TargetCounts
	ids := make([]int64, 0, len(rows))
	types := make(map[int64]push.TargetType, len(rows))
	for _, r := range rows {
		c.Targets++
		if r.Presence == string(push.PresenceGone) {
			c.Gone++
			continue
		}
		ids = append(ids, r.ID)
		types[r.ID] = push.TargetType(r.Type)
	}
	if !replies {
		c.Reachable = len(ids)
		return c, nil
	}
	if len(ids) == 0 {
		return c, nil
	}
	var rs []targetReplyRow
	if err := q.r.NewSelect().Model(&rs).Where("target_id IN (?)", inList64(ids)).Scan(ctx); err != nil {
		return push.TargetCounts{}, q.fail(err, "count reachable targets")
	}
	for _, r := range rs {
		if _, ok := pickReply(r.state(), now, rule(types[r.TargetID])); ok {
			c.Reachable++
		}
	}
	return c, nil
}

// pickReply is the reply a target's state allows at now under rule: the
// next to its latest message, else to its latest event.
func pickReply(st push.ReplyState, now time.Time, rule push.ReplyRule) (push.ReplyTo, bool) {
	if st.MessageID != "" && now.Sub(st.MessageAt) < rule.MessageWindow && st.MessageSeq < rule.PerMessage {
		return push.ReplyTo{MessageID: st.MessageID, Seq: st.MessageSeq + 1}, true
	}
	if st.EventID != "" && now.Sub(st.EventAt) < rule.EventWindow && st.EventSeq < rule.PerMessage {
		return push.ReplyTo{EventID: st.EventID, Seq: st.EventSeq + 1}, true
	}
	return push.ReplyTo{}, false
}

// NoteReply implements push.Tx.
func (q queries) NoteReply(ctx context.Context, targetID int64, n push.ReplyNote) error {
	row := targetReplyRow{TargetID: targetID}
	ins := q.w.NewInsert().Model(&row)
	switch {
	case n.MessageID != "":
		row.MsgID, row.MsgMs = n.MessageID, toMs(n.At)
		ins = ins.On("CONFLICT (target_id) DO UPDATE").Set("msg_id = EXCLUDED.msg_id").Set("msg_ms = EXCLUDED.msg_ms").Set("msg_seq = 0")
	case n.EventID != "":
		row.EventID, row.EventMs = n.EventID, toMs(n.At)
		ins = ins.On("CONFLICT (target_id) DO UPDATE").Set("event_id = EXCLUDED.event_id").Set("event_ms = EXCLUDED.event_ms").Set("event_seq = 0")
	default:
		return nil
	}
	if _, err := ins.Exec(ctx); err != nil {
		return q.fail(err, "record a reply context")
	}
	return nil
}

// ClaimReply implements push.Tx. The row is locked for the read where the
// database runs writers at once, so that two claims never take one reply.
func (q queries) ClaimReply(ctx context.Context, targetID int64, now time.Time, rule push.ReplyRule) (push.ReplyTo, push.ReplyState, error) {
	var reply push.ReplyTo
	var state push.ReplyState
	err := q.atomic(ctx, func(ctx context.Context, q queries) error {
		var row targetReplyRow
		sel := q.w.NewSelect().Model(&row).Where("target_id = ?", targetID)
		if q.store.dialect.lockReads {
			sel = sel.For("UPDATE")
		}
		err := sel.Scan(ctx)
		if isNoRows(err) {
			return nil
		}
		if err != nil {
			return q.fail(err, "read a reply context")
		}
		state = row.state()
		r, ok := pickReply(state, now, rule)
		if !ok {
			return nil
		}
		up := q.w.NewUpdate().Model((*targetReplyRow)(nil)).Where("target_id = ?", targetID)
		if r.MessageID != "" {
			up = up.Set("msg_seq = ?", r.Seq)
		} else {
			up = up.Set("event_seq = ?", r.Seq)
		}
		if _, err := up.Exec(ctx); err != nil {
			return q.fail(err, "claim a reply")
		}
		reply = r
		return nil
	})
	return reply, state, err
}

// SetJobReply implements push.Tx.
func (q queries) SetJobReply(ctx context.Context, jobID string, r push.ReplyTo) error {
	row := jobReplyRow{JobID: jobID, MsgID: r.MessageID, EventID: r.EventID, Seq: r.Seq}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "record a job's reply")
	}
	return nil
}

// JobReply implements push.Tx.
func (q queries) JobReply(ctx context.Context, jobID string) (push.ReplyTo, error) {
	var row jobReplyRow
	err := q.r.NewSelect().Model(&row).Where("job_id = ?", jobID).Scan(ctx)
	if isNoRows(err) {
		return push.ReplyTo{}, push.Errorf(push.NotFound, "job_reply_not_found", "job %s is not a reply", jobID)
	}
	if err != nil {
		return push.ReplyTo{}, q.fail(err, "read a job's reply")
	}
	return push.ReplyTo{MessageID: row.MsgID, EventID: row.EventID, Seq: row.Seq}, nil
}

// CreateBindCode implements push.Tx.
func (q queries) CreateBindCode(ctx context.Context, c *push.BindCode) error {
	row := bindCodeRow{BotID: c.BotID, AccountID: c.AccountID, CodeHash: c.CodeHash, Hint: c.Hint, Type: string(c.Type), UsesLeft: c.UsesLeft,
		CreatedBy: c.CreatedBy, CreatedMs: toMs(c.CreatedAt), ExpiresMs: toMs(c.ExpiresAt)}
	if _, err := q.w.NewInsert().Model(&row).Exec(ctx); err != nil {
		return q.fail(err, "create bind code")
	}
	c.ID = row.ID
	return nil
}

func (q queries) bindCodeWhere(ctx context.Context, col string, v any) (push.BindCode, error) {
	var row bindCodeRow
	err := q.r.NewSelect().Model(&row).Where("? = ?", bunIdent(col), v).Scan(ctx)
	if isNoRows(err) {
		return push.BindCode{}, push.Errorf(push.NotFound, "bind_code_not_found", "no such bind code")
	}
	if err != nil {
		return push.BindCode{}, q.fail(err, "read bind code")
	}
	return row.code(), nil
}

// BindCode implements push.Tx.
func (q queries) BindCode(ctx context.Context, id int64) (push.BindCode, error) {
	return q.bindCodeWhere(ctx, "id", id)
}

// BindCodeByHash implements push.Tx.
func (q queries) BindCodeByHash(ctx context.Context, hash string) (push.BindCode, error) {
	return q.bindCodeWhere(ctx, "code_hash", hash)
}

// BindCodes implements push.Tx.
func (q queries) BindCodes(ctx context.Context, f push.BindCodeFilter) ([]push.BindCode, error) {
	var rows []bindCodeRow
	if err := page(q.r.NewSelect().Model(&rows).Where("bot_id = ?", f.BotID), f.Cursor, f.Limit).Scan(ctx); err != nil {
		return nil, q.fail(err, "list bind codes")
	}
	out := make([]push.BindCode, len(rows))
	for i, r := range rows {
		out[i] = r.code()
	}
	return out, nil
}

// UseBindCode implements push.Tx.
func (q queries) UseBindCode(ctx context.Context, id, targetID int64, at time.Time) error {
	res, err := q.w.NewUpdate().Model((*bindCodeRow)(nil)).Set("uses_left = uses_left - 1").Set("last_target = ?", targetID).
		Where("id = ?", id).Where("uses_left > 0").Where("revoked_ms = 0").Where("expires_ms > ?", toMs(at)).Exec(ctx)
	if err != nil {
		return q.fail(err, "use bind code")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return push.Errorf(push.Conflict, "bind_code_used", "the bind code was used up, revoked or expired meanwhile")
	}
	return nil
}

// RevokeBindCode implements push.Tx.
func (q queries) RevokeBindCode(ctx context.Context, id int64, at time.Time) error {
	if _, err := q.w.NewUpdate().Model((*bindCodeRow)(nil)).Set("revoked_ms = ?", toMs(at)).Where("id = ?", id).Where("revoked_ms = 0").Exec(ctx); err != nil {
		return q.fail(err, "revoke bind code")
	}
	return nil
}

// SeenEvent implements push.Tx: the primary key refuses an event id seen
// before, on any node.
func (q queries) SeenEvent(ctx context.Context, botID int64, eventID string, at time.Time) (bool, error) {
	res, err := q.w.NewRaw("INSERT INTO events_seen (bot_id, event_id, seen_ms) VALUES (?, ?, ?) ON CONFLICT (bot_id, event_id) DO NOTHING",
		botID, eventID, toMs(at)).Exec(ctx)
	if err != nil {
		return false, q.fail(err, "record an event")
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ListeningBots implements push.Tx.
func (q queries) ListeningBots(ctx context.Context, platforms []string) ([]push.Bot, error) {
	var rows []botRow
	if err := q.r.NewSelect().Model(&rows).Where("platform IN (?)", inList(platforms)).Where("deleted_ms = 0").Order("id").Scan(ctx); err != nil {
		return nil, q.fail(err, "list listening bots")
	}
	out := make([]push.Bot, 0, len(rows))
	for _, r := range rows {
		b, err := q.bot(r)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Receiver implements push.Tx.
func (q queries) Receiver(ctx context.Context, botID int64) (push.Receiver, error) {
	var row receiverRow
	err := q.r.NewSelect().Model(&row).Where("bot_id = ?", botID).Scan(ctx)
	if isNoRows(err) {
		return push.Receiver{BotID: botID}, push.Errorf(push.NotFound, "receiver_not_found", "bot %d has no receiver yet", botID)
	}
	if err != nil {
		return push.Receiver{}, q.fail(err, "read receiver")
	}
	return row.receiver(), nil
}

// AcquireReceiver implements push.Tx: an upsert whose update happens only
// when the lease is the holder's or has ended.
func (q queries) AcquireReceiver(ctx context.Context, botID int64, holder string, now, until time.Time) (bool, error) {
	res, err := q.w.NewRaw("INSERT INTO receivers (bot_id, holder, lease_ms) VALUES (?, ?, ?) "+
		"ON CONFLICT (bot_id) DO UPDATE SET holder = EXCLUDED.holder, lease_ms = EXCLUDED.lease_ms "+
		"WHERE receivers.holder = EXCLUDED.holder OR receivers.lease_ms < ?", botID, holder, toMs(until), toMs(now)).Exec(ctx)
	if err != nil {
		return false, q.fail(err, "take a receiver's lease")
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReleaseReceiver implements push.Tx.
func (q queries) ReleaseReceiver(ctx context.Context, botID int64, holder string) error {
	if _, err := q.w.NewUpdate().Model((*receiverRow)(nil)).Set("lease_ms = 0").Where("bot_id = ?", botID).Where("holder = ?", holder).Exec(ctx); err != nil {
		return q.fail(err, "give up a receiver's lease")
	}
	return nil
}

// SaveCursor implements push.Tx.
func (q queries) SaveCursor(ctx context.Context, botID int64, holder, cursor string) error {
	res, err := q.w.NewUpdate().Model((*receiverRow)(nil)).Set("cursor = ?", cursor).Set("failures = 0").Set("error = ''").
		Where("bot_id = ?", botID).Where("holder = ?", holder).Exec(ctx)
	if err != nil {
		return q.fail(err, "save a receiver's cursor")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return push.Errorf(push.Conflict, "receiver_lost", "another node runs bot %d's receiver now", botID)
	}
	return nil
}

// SaveSetup implements push.Tx.
func (q queries) SaveSetup(ctx context.Context, botID int64, holder, setup string) error {
	if _, err := q.w.NewUpdate().Model((*receiverRow)(nil)).Set("setup = ?", setup).Where("bot_id = ?", botID).Where("holder = ?", holder).Exec(ctx); err != nil {
		return q.fail(err, "save a receiver's setup")
	}
	return nil
}

// ReceiverFailed implements push.Tx.
func (q queries) ReceiverFailed(ctx context.Context, botID int64, at time.Time, msg string) error {
	if _, err := q.w.NewUpdate().Model((*receiverRow)(nil)).Set("failures = failures + 1").Set("error = ?", msg).Set("failed_ms = ?", toMs(at)).
		Where("bot_id = ?", botID).Exec(ctx); err != nil {
		return q.fail(err, "record a receiver's failure")
	}
	return nil
}

// NoteReceived implements push.Tx.
func (q queries) NoteReceived(ctx context.Context, botID int64, at time.Time) error {
	if _, err := q.w.NewRaw("INSERT INTO receivers (bot_id, event_ms) VALUES (?, ?) ON CONFLICT (bot_id) DO UPDATE SET event_ms = EXCLUDED.event_ms",
		botID, toMs(at)).Exec(ctx); err != nil {
		return q.fail(err, "record an event's time")
	}
	return nil
}

// ForgetEventsBefore implements push.Tx.
func (q queries) ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := q.w.NewDelete().TableExpr("events_seen").Where("seen_ms < ?", toMs(t)).Exec(ctx)
	if err != nil {
		return 0, q.fail(err, "forget events")
	}
	n, _ := res.RowsAffected()
	return n, nil
}
