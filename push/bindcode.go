package push

import (
	"context"
	"strings"
	"time"
)

// BindCode is a one-time code that binds a chat as a target of a bot: a
// person sends it to the bot (or follows its link), and the chat it came
// from becomes a user target (a private chat) or a group target. Only a
// hash of the code is stored; the code is shown once.
type BindCode struct {
	ID        int64
	BotID     int64
	AccountID int64
	Hint      string     // the code's last three characters
	CodeHash  string     // never shown
	Type      TargetType // the chats it binds: user or group; "" either
	UsesLeft  int
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt time.Time
	// LastTargetID is the target the code bound last (0: none yet).
	LastTargetID int64
}

// Usable reports whether the code can still bind at now.
func (c BindCode) Usable(now time.Time) bool {
	return c.ID != 0 && c.UsesLeft > 0 && c.RevokedAt.IsZero() && now.Before(c.ExpiresAt)
}

// BindCodeCreate is a new bind code: its bot, the chats it binds (""
// either), how long it lasts (default a day, at most 30) and how many
// chats it binds (default 1, at most 1000).
type BindCodeCreate struct {
	BotID int64
	Type  TargetType
	TTL   time.Duration
	Uses  int
}

// NewBindCode is a bind code as made: the code itself (shown once), the
// instruction a person follows, and the platform's link where it has one.
type NewBindCode struct {
	BindCode
	Code string
	// Command is what to send to the bot: "bind <code>" (in a group, with
	// the bot mentioned).
	Command string
	Link    BindLink
}

// BindCodeFilter selects a bot's bind codes for List: newest first.
type BindCodeFilter struct {
	BotID  int64
	Limit  int
	Cursor string
}

// BindCodeService holds the verbs on bind codes. Get it from
// Engine.BindCodes.
type BindCodeService struct{ e *Engine }

// BindCodes returns the verbs on bind codes.
func (e *Engine) BindCodes() *BindCodeService { return &e.bindCodes }

// The bounds of bind codes.
const (
	bindCodeLen        = 8
	defaultBindCodeTTL = 24 * time.Hour
	maxBindCodeTTL     = 30 * 24 * time.Hour
	maxBindCodeUses    = 1000
)

// Create makes a bind code for a bot of an account the principal sees, on
// a platform that hears its bots.
func (s *BindCodeService) Create(ctx context.Context, p Principal, c BindCodeCreate) (NewBindCode, error) {
	e := s.e
	b, err := e.Bots().Get(ctx, p, c.BotID)
	if err != nil {
		return NewBindCode{}, err
	}
	pl := e.platforms[b.Platform]
	src, ok := pl.(EventSource)
	if !ok || src.ReceiveMode(b.Config) == ReceiveNone {
		return NewBindCode{}, Errorf(Invalid, "bot_not_listening", "bot %d does not hear its users (%s bots %s): bind targets by their address instead", b.ID, b.Platform, whyDeaf(pl))
	}
	if c.Type != "" && !c.Type.Valid() {
		return NewBindCode{}, fieldErrorf(FieldTargetType, "invalid_target_type", "target type %q is not known: use user or group, or leave it out for either", truncate(string(c.Type), 40))
	}
	if c.TTL == 0 {
		c.TTL = defaultBindCodeTTL
	}
	if c.TTL < time.Minute || c.TTL > maxBindCodeTTL {
		return NewBindCode{}, Errorf(Invalid, "invalid_expiry", "a bind code lasts from a minute to %d days, not %s", int(maxBindCodeTTL/(24*time.Hour)), c.TTL)
	}
	if c.Uses == 0 {
		c.Uses = 1
	}
	if c.Uses < 0 || c.Uses > maxBindCodeUses {
		return NewBindCode{}, Errorf(Invalid, "invalid_uses", "a bind code binds 1 to %d chats, not %d", maxBindCodeUses, c.Uses)
	}
	code := randomCode(bindCodeLen, inviteAlphabet)
	now := e.clock.Now()
	bc := BindCode{BotID: b.ID, AccountID: b.AccountID, Hint: code[bindCodeLen-3:], CodeHash: HashKey(code), Type: c.Type,
		UsesLeft: c.Uses, CreatedBy: p.actor(), CreatedAt: now, ExpiresAt: now.Add(c.TTL)}
	err = e.audited(ctx, p, b.AccountID, "bindcode.create", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if err := tx.CreateBindCode(ctx, &bc); err != nil {
			return "", err
		}
		return "bind code " + i64(bc.ID) + " of bot " + i64(b.ID), nil
	})
	if err != nil {
		return NewBindCode{}, err
	}
	out := NewBindCode{BindCode: bc, Code: code, Command: "bind " + code}
	if l, ok := pl.(BindLinker); ok {
		link, err := l.BindLink(ctx, b, code, c.Type, c.TTL)
		if err != nil {
			e.log.Warn("the platform made no link for a bind code; the typed code works", "bot", b.ID, "platform", b.Platform, "err", err)
		}
		out.Link = link
	}
	return out, nil
}

// whyDeaf says why a platform's bots do not hear their users.
func whyDeaf(p Platform) string {
	if _, ok := p.(EventSource); ok {
		return "hear their users only when the bot's config names how (its receive setting)"
	}
	if p != nil && !p.Info().Targets {
		return "have one destination and no targets"
	}
	return "cannot receive messages"
}

// List lists a bot's bind codes, newest first.
func (s *BindCodeService) List(ctx context.Context, p Principal, f BindCodeFilter) (Page[BindCode], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[BindCode]{}, err
	}
	if _, err := s.e.Bots().Get(ctx, p, f.BotID); err != nil {
		return Page[BindCode]{}, err
	}
	f.Limit = limit + 1
	cs, err := s.e.store.BindCodes(ctx, f)
	if err != nil {
		return Page[BindCode]{}, err
	}
	return pageOf(cs, limit, func(c BindCode) int64 { return c.ID }), nil
}

// Get returns a bind code of a bot the principal sees.
func (s *BindCodeService) Get(ctx context.Context, p Principal, id int64) (BindCode, error) {
	c, err := s.e.store.BindCode(ctx, id)
	if IsKind(err, NotFound) || err == nil && !p.sees(c.AccountID) {
		return BindCode{}, Errorf(NotFound, "bind_code_not_found", "bind code %d does not exist", id)
	}
	return c, err
}

// Revoke revokes a bind code; revoking it again changes nothing.
func (s *BindCodeService) Revoke(ctx context.Context, p Principal, id int64) (BindCode, error) {
	e := s.e
	c, err := s.Get(ctx, p, id)
	if err != nil || !c.RevokedAt.IsZero() {
		return c, err
	}
	err = e.audited(ctx, p, c.AccountID, "bindcode.revoke", "bind code "+i64(id), func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		return "", tx.RevokeBindCode(ctx, id, e.clock.Now())
	})
	if err != nil {
		return BindCode{}, err
	}
	return e.store.BindCode(ctx, id)
}

// bindCommand reads a bind code out of a message: "bind CODE", "/bind
// CODE", "/start CODE" (Telegram's deep link), "/start@bot CODE", "绑定
// CODE", any case, the code with or without dashes or spaces.
func bindCommand(text string) (string, bool) {
	fields := strings.Fields(text)
	if len(fields) < 2 {
		return "", false
	}
	cmd := strings.ToLower(fields[0])
	if i := strings.IndexByte(cmd, '@'); i > 0 {
		cmd = cmd[:i]
	}
	switch cmd {
	case "bind", "/bind", "/start", "绑定":
	default:
		return "", false
	}
	code := normalizeCode(strings.Join(fields[1:], ""))
	if code == "" || len(code) > 64 {
		return "", false
	}
	return code, true
}
