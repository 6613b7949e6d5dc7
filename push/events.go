package push

import (
	"context"
	"fmt"
	"time"
)

// EventService holds the verbs of inbound events: the bots' webhooks and
// the state of their receivers. Get it from Engine.Events.
type EventService struct{ e *Engine }

// Events returns the verbs of inbound events.
func (e *Engine) Events() *EventService { return &e.events }

// webhookRefused is the answer to a webhook request that does not verify,
// and to one for an unknown bot: the same, so that a caller learns nothing.
func webhookRefused() WebhookResponse {
	return WebhookResponse{Status: 401, ContentType: "application/json",
		Body: []byte(`{"code":401,"message":"the request's signature does not verify","error":"bad_signature"}` + "\n")}
}

// WebhookRefused is the answer a platform gives a webhook request that
// does not verify: a 401 whose body says only that.
func WebhookRefused() WebhookResponse { return webhookRefused() }

// Webhook answers a platform's request to a bot's webhook. The request
// authenticates itself (the platform's signature or secret); an unknown
// bot, a deleted one, or one that does not take webhooks is answered as a
// request that does not verify.
func (s *EventService) Webhook(ctx context.Context, botID int64, req WebhookRequest) WebhookResponse {
	e := s.e
	b, err := e.catalog.bot(ctx, e.store, botID)
	if err != nil {
		if !IsKind(err, NotFound) {
			e.log.Warn("webhook: reading the bot failed", "bot", botID, "err", err)
			return WebhookResponse{Status: 503, ContentType: "text/plain", Body: []byte("retry later\n")}
		}
		return webhookRefused()
	}
	src, ok := e.platforms[b.Platform].(EventSource)
	if !ok || src.ReceiveMode(b.Config) != ReceiveWebhook {
		return webhookRefused()
	}
	return src.Webhook(ctx, b, req, &eventSink{e: e, bot: b})
}

// ReceiverStatus is how a bot hears its users.
type ReceiverStatus struct {
	Mode ReceiveMode
	// Running says that a node runs the bot's receiver (outbound), or
	// that its webhook takes requests.
	Running bool
	// Failures counts the receiver's failures in a row; Error is the last
	// one's, and FailedAt when.
	Failures    int
	Error       string
	FailedAt    time.Time
	LastEventAt time.Time
	// WebhookPath is where the platform sends the webhook's requests,
	// below the server's public URL.
	WebhookPath string
	// Targets counts the bot's targets; Gone those gone; Reachable those a
	// platform that takes replies only can send to now.
	Targets, Gone, Reachable int
}

// Status returns how a bot of an account the principal sees hears its
// users.
func (s *EventService) Status(ctx context.Context, p Principal, botID int64) (ReceiverStatus, error) {
	e := s.e
	b, err := e.Bots().Get(ctx, p, botID)
	if err != nil {
		return ReceiverStatus{}, err
	}
	var st ReceiverStatus
	src, ok := e.platforms[b.Platform].(EventSource)
	if ok {
		st.Mode = src.ReceiveMode(b.Config)
	}
	now := e.clock.Now()
	if st.Mode != ReceiveNone {
		r, err := e.store.Receiver(ctx, b.ID)
		if err != nil && !IsKind(err, NotFound) {
			return ReceiverStatus{}, err
		}
		st.Failures, st.Error, st.FailedAt, st.LastEventAt = r.Failures, r.Error, r.FailedAt, r.EventAt
		st.Running = st.Mode == ReceiveWebhook || r.Holder != "" && now.Before(r.LeaseUntil)
		if st.Mode == ReceiveWebhook {
			st.WebhookPath = WebhookPath(b.ID)
		}
	}
	rule, replies := e.replyRule(b.Platform)
	ts, err := e.store.TargetCounts(ctx, b.ID, now, rule, replies)
	if err != nil {
		return ReceiverStatus{}, err
	}
	st.Targets, st.Gone, st.Reachable = ts.Targets, ts.Gone, ts.Reachable
	return st, nil
}

// WebhookPath is the path of a bot's webhook below the server's root.
func WebhookPath(botID int64) string { return fmt.Sprintf("/api/hooks/%d", botID) }

// replyRule returns a platform's reply rules for users and whether it has
// any.
func (e *Engine) replyRule(platform string) (func(TargetType) ReplyRule, bool) {
	rr, ok := e.platforms[platform].(ReplyRules)
	if !ok {
		return nil, false
	}
	return rr.ReplyRules, true
}

// eventSink is the engine's EventSink for one bot: events go to
// handleEvent, the cursor to the store (under the receiver's lease when
// holder is set).
type eventSink struct {
	e      *Engine
	bot    Bot
	holder string
}

func (s *eventSink) Handle(ctx context.Context, ev Event) (EventReply, error) {
	return s.e.handleEvent(ctx, s.bot, ev)
}

func (s *eventSink) SaveCursor(ctx context.Context, cursor string) error {
	if s.holder == "" {
		return nil
	}
	return s.e.store.SaveCursor(ctx, s.bot.ID, s.holder, cursor)
}

// The replies a chat gets, in English and in Chinese: most of the
// platforms' users read Chinese.
const (
	replyBound      = "Bound: this chat is target %d of %s. 已绑定：此会话是 %s 的目标 %d。"
	replyAlready    = "Already bound: this chat is target %d of %s. 已绑定过：此会话是 %s 的目标 %d。"
	replyBadCode    = "This code is unknown, used or expired: ask for a new one. 此绑定码无效、已用或已过期，请重新获取。"
	replyWrongType  = "This code binds a %s chat, not this one. 此绑定码只能绑定%s。"
	replyTooMany    = "Too many wrong codes: wait a while, then try again. 错误次数过多，请稍后再试。"
	maxEventTextLen = 4096
)

// handleEvent handles one event of a bot: once, however often it comes.
func (e *Engine) handleEvent(ctx context.Context, b Bot, ev Event) (EventReply, error) {
	now := e.clock.Now()
	if ev.At.IsZero() {
		ev.At = now
	}
	if ev.ID != "" {
		first, err := e.store.SeenEvent(ctx, b.ID, ev.ID, now)
		if err != nil || !first {
			return EventReply{}, err
		}
	}
	e.obs.EventHandled(b.Platform, ev.Kind)
	if err := e.store.NoteReceived(ctx, b.ID, now); err != nil {
		e.log.Warn("recording an event's time failed", "bot", b.ID, "err", err)
	}
	if !ev.Type.Valid() || ev.Address == "" {
		return EventReply{}, nil // an event of no chat this engine binds (a channel, a service account)
	}
	t, err := e.store.TargetByAddress(ctx, b.ID, ev.Type, ev.Address)
	if err != nil && !IsKind(err, NotFound) {
		return EventReply{}, err
	}
	bound := err == nil // an unbound target is not found
	switch ev.Kind {
	case EventMessage:
		if len(ev.Text) > maxEventTextLen {
			ev.Text = ev.Text[:maxEventTextLen]
		}
		if code, ok := bindCommand(ev.Text); ok {
			return e.bindFromChat(ctx, b, ev, code, now)
		}
		if bound {
			return EventReply{}, e.noteContext(ctx, t, ev, now)
		}
	case EventJoined:
		if bound {
			return EventReply{}, e.noteContext(ctx, t, ev, now)
		}
	case EventLeft:
		if bound && t.Presence != PresenceGone {
			note := ev.Text
			if note == "" {
				note = "left the bot"
			}
			err := e.catalog.change(func() error {
				return e.store.SetPresence(ctx, t.ID, PresenceGone, now, truncate(note, 200))
			})
			if err == nil {
				e.log.Info("a target is gone", "bot", b.ID, "target", t.ID, "why", note)
			}
			return EventReply{}, err
		}
	case EventMoved:
		if bound && ev.NewAddress != "" {
			err := e.catalog.change(func() error { return e.store.MoveTarget(ctx, t.ID, ev.NewAddress) })
			return EventReply{}, err
		}
	}
	return EventReply{}, nil
}

// noteContext records that a bound target's chat spoke: it is active
// again if it was gone, and its message (or event) is the latest a reply
// may answer.
func (e *Engine) noteContext(ctx context.Context, t Target, ev Event, now time.Time) error {
	if t.Presence == PresenceGone {
		err := e.catalog.change(func() error { return e.store.SetPresence(ctx, t.ID, PresenceActive, now, "") })
		if err != nil {
			return err
		}
	}
	if _, ok := e.replyRule(e.platformOfBot(ctx, t.BotID)); !ok {
		return nil
	}
	switch {
	case ev.Kind == EventMessage && ev.MessageID != "":
		return e.store.NoteReply(ctx, t.ID, ReplyNote{MessageID: ev.MessageID, At: ev.At})
	case ev.Kind == EventJoined:
		id := ev.ReplyID
		if id == "" {
			id = ev.ID
		}
		if id != "" {
			return e.store.NoteReply(ctx, t.ID, ReplyNote{EventID: id, At: ev.At})
		}
	}
	return nil
}

// platformOfBot returns a bot's platform ("" when the bot is gone).
func (e *Engine) platformOfBot(ctx context.Context, botID int64) string {
	b, err := e.catalog.bot(ctx, e.store, botID)
	if err != nil {
		return ""
	}
	return b.Platform
}

// bindFromChat binds the chat an event came from with a bind code, and
// says so in the chat. The same chat again gets the same target (and
// spends no use); a bad code binds nothing.
func (e *Engine) bindFromChat(ctx context.Context, b Bot, ev Event, code string, now time.Time) (EventReply, error) {
	keys := []string{fmt.Sprintf("b:%d:%s", b.ID, ev.Address)}
	if e.throttle.wait(keys, now) > 0 {
		return EventReply{Text: replyTooMany}, nil
	}
	c, err := e.store.BindCodeByHash(ctx, HashKey(code))
	if err != nil && !IsKind(err, NotFound) {
		return EventReply{}, err
	}
	if err == nil && c.BotID == b.ID && !c.Usable(now) {
		// A code of this bot that is spent: the chat it bound may send it
		// again, and learns that it is bound.
		if t, terr := e.store.TargetByAddress(ctx, b.ID, ev.Type, ev.Address); terr == nil {
			if err := e.noteContext(ctx, t, ev, now); err != nil {
				return EventReply{}, err
			}
			return e.answerIn(ctx, b, t, fmt.Sprintf(replyAlready, t.ID, b.Name, b.Name, t.ID), now), nil
		}
	}
	if err != nil || c.BotID != b.ID || !c.Usable(now) {
		e.throttle.fail(keys, now)
		return EventReply{Text: replyBadCode}, nil
	}
	if c.Type != "" && c.Type != ev.Type {
		kind := map[TargetType]string{TargetUser: "private", TargetGroup: "group"}[c.Type]
		kindZH := map[TargetType]string{TargetUser: "私聊", TargetGroup: "群聊"}[c.Type]
		return EventReply{Text: fmt.Sprintf(replyWrongType, kind, kindZH)}, nil
	}
	pl := e.platforms[b.Platform]
	supported := false
	for _, tt := range pl.Info().TargetTypes {
		supported = supported || tt == ev.Type
	}
	if !supported {
		return EventReply{Text: replyBadCode}, nil
	}
	name := ev.Name
	if name == "" {
		name = ev.Address
	}
	t := Target{BotID: b.ID, Type: ev.Type, Address: ev.Address, Name: truncate(name, MaxName), CreatedAt: now}
	already := false
	p := Principal{Role: RoleMember, AccountID: b.AccountID}
	err = e.catalog.change(func() error {
		return e.audited(ctx, p, b.AccountID, "target.bind", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
			already = false
			old, err := tx.TargetByAddress(ctx, b.ID, ev.Type, ev.Address)
			if err != nil && !IsKind(err, NotFound) {
				return "", err
			}
			if err == nil {
				already, t = true, old
				if old.Presence == PresenceGone {
					if err := tx.SetPresence(ctx, old.ID, PresenceActive, now, ""); err != nil {
						return "", err
					}
				}
				return "target " + i64(old.ID) + " bound again by its chat", nil
			}
			if err := tx.CreateTarget(ctx, &t); err != nil {
				return "", err
			}
			if err := tx.UseBindCode(ctx, c.ID, t.ID, now); err != nil {
				return "", err
			}
			return "target " + i64(t.ID) + " (" + string(t.Type) + " " + t.Address + ") of bot " + i64(b.ID) + " by bind code " + i64(c.ID), nil
		})
	})
	if IsKind(err, Conflict) {
		return EventReply{Text: replyBadCode}, nil // the code was used up meanwhile
	}
	if err != nil {
		return EventReply{}, err
	}
	if err := e.noteContext(ctx, t, ev, now); err != nil {
		e.log.Warn("recording a bound target's message failed", "target", t.ID, "err", err)
	}
	if already {
		return e.answerIn(ctx, b, t, fmt.Sprintf(replyAlready, t.ID, b.Name, b.Name, t.ID), now), nil
	}
	e.log.Info("a chat bound itself as a target", "bot", b.ID, "target", t.ID, "type", t.Type)
	return e.answerIn(ctx, b, t, fmt.Sprintf(replyBound, t.ID, b.Name, b.Name, t.ID), now), nil
}

// answerIn is the answer text to a bound target's chat. On a platform
// that takes replies only it claims the reply it goes as, like a push,
// so that the pushes after it take the next ones; when none is left the
// platform answers the event's message as it would an unbound chat's.
func (e *Engine) answerIn(ctx context.Context, b Bot, t Target, text string, now time.Time) EventReply {
	reply := EventReply{Text: text}
	rules, ok := e.replyRule(b.Platform)
	if !ok {
		return reply
	}
	r, _, err := e.store.ClaimReply(ctx, t.ID, now, rules(t.Type))
	if err != nil {
		e.log.Warn("claiming a reply for a bind answer failed", "target", t.ID, "err", err)
		return reply
	}
	reply.Reply = r
	return reply
}
