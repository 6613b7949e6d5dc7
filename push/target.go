package push

import (
	"context"
	"strings"
	"time"
)

// TargetType says whether a target is a person or a group chat.
type TargetType string

// Target types.
const (
	TargetUser  TargetType = "user"
	TargetGroup TargetType = "group"
)

// Valid reports whether t is a known target type.
func (t TargetType) Valid() bool { return t == TargetUser || t == TargetGroup }

// Target is a destination bound under a bot. Its ID is Herald's; Address is
// the platform's identifier (a chat id, an open id, …).
type Target struct {
	ID        int64
	BotID     int64
	Type      TargetType
	Address   string
	Name      string
	CreatedAt time.Time
	// Presence is PresenceActive, or PresenceGone when the chat blocked,
	// unfollowed or removed the bot (sends to it are refused before they
	// are charged), since PresenceAt, for PresenceNote.
	Presence     Presence
	PresenceAt   time.Time
	PresenceNote string
}

// Presence says whether a target's chat still hears the bot.
type Presence string

// Presences.
const (
	PresenceActive Presence = "active"
	PresenceGone   Presence = "gone"
)

// TargetUpdate changes a target; nil fields stay as they are.
type TargetUpdate struct {
	Name *string
}

// TargetFilter selects a bot's targets for List: newest first, at most
// Limit, after Cursor.
type TargetFilter struct {
	BotID  int64
	Limit  int
	Cursor string
}

// TargetService holds the verbs on targets. Get it from Engine.Targets.
type TargetService struct{ e *Engine }

// Targets returns the verbs on targets.
func (e *Engine) Targets() *TargetService { return &e.targets }

// maxAddress bounds a target's address in bytes.
const maxAddress = 512

// Bind binds a target to a bot of an account the principal sees, after the
// bot's platform has checked it. Binding the same address and type twice
// is a Conflict.
func (s *TargetService) Bind(ctx context.Context, p Principal, t Target) (Target, error) {
	e := s.e
	b, err := e.Bots().Get(ctx, p, t.BotID)
	if err != nil {
		return Target{}, err
	}
	pl, ok := e.platforms[b.Platform]
	if !ok {
		return Target{}, Errorf(Invalid, "platform_unavailable", "bot %d uses the platform %q, which this server does not run", b.ID, b.Platform)
	}
	info := pl.Info()
	if !info.Targets {
		return Target{}, Errorf(Invalid, "platform_has_no_targets", "bot %d is on %s, which has no targets: send to the bot without a target", b.ID, b.Platform)
	}
	if !t.Type.Valid() {
		return Target{}, fieldErrorf(FieldTargetType, "invalid_target_type", "target type %q is not known: use user or group", truncate(string(t.Type), 40)).with(truncate(string(t.Type), 40), 0)
	}
	supported := false
	for _, tt := range info.TargetTypes {
		supported = supported || tt == t.Type
	}
	if !supported {
		return Target{}, fieldErrorf(FieldTargetType, "unsupported_target_type", "%s bots cannot send to a %s target: use %s", b.Platform, t.Type, validTargetTypes(info.TargetTypes))
	}
	t.Address = strings.TrimSpace(t.Address)
	if t.Address == "" || len(t.Address) > maxAddress {
		return Target{}, fieldErrorf(FieldAddress, "invalid_address", "the target address must be the platform's id of the user or group (1 to %d bytes)", maxAddress).with("", maxAddress)
	}
	if t.Name == "" {
		t.Name = t.Address
	} else if err := validateName("target", t.Name); err != nil {
		return Target{}, err
	}
	if err := pl.ValidateTarget(b.Config, t); err != nil {
		if IsKind(err, Invalid) {
			return Target{}, err
		}
		return Target{}, fieldErrorf(FieldAddress, "invalid_target", "%s target: %v", b.Platform, err)
	}
	t.ID = 0
	t.CreatedAt = e.clock.Now()
	err = e.catalog.change(func() error {
		return e.audited(ctx, p, b.AccountID, "target.bind", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
			// A target unbound before and bound again keeps its id.
			if err := tx.CreateTarget(ctx, &t); err != nil {
				if ReasonOf(err) == ReasonDuplicate {
					return "", Errorf(Conflict, "target_exists", "bot %d already has the %s target %q bound", b.ID, t.Type, t.Address)
				}
				return "", err
			}
			return "target " + i64(t.ID) + " (" + string(t.Type) + " " + t.Address + ") of bot " + i64(b.ID), nil
		})
	})
	if err != nil {
		return Target{}, err
	}
	return t, nil
}

// Update renames a target.
func (s *TargetService) Update(ctx context.Context, p Principal, id int64, u TargetUpdate) (Target, error) {
	e := s.e
	t, err := s.Get(ctx, p, id)
	if err != nil {
		return Target{}, err
	}
	b, err := e.store.Bot(ctx, t.BotID)
	if err != nil {
		return Target{}, err
	}
	if u.Name != nil {
		if err := validateName("target", *u.Name); err != nil {
			return Target{}, err
		}
		t.Name = *u.Name
	}
	err = e.catalog.change(func() error {
		return e.audited(ctx, p, b.AccountID, "target.update", "target "+i64(t.ID)+" ("+t.Name+")", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
			return "", tx.UpdateTarget(ctx, t)
		})
	})
	if err != nil {
		return Target{}, err
	}
	return t, nil
}

// Unbind unbinds a target: its queued jobs are canceled and their points
// returned (once), its running jobs finish, and sends to it are refused as
// to an unknown target (on other nodes within a second). The history of
// its finished jobs stays; binding its address again gives it back its id.
func (s *TargetService) Unbind(ctx context.Context, p Principal, id int64) (int, error) {
	e := s.e
	t, err := s.Get(ctx, p, id)
	if err != nil {
		return 0, err
	}
	b, err := e.store.Bot(ctx, t.BotID)
	if err != nil {
		return 0, err
	}
	var canceled []string
	err = e.catalog.change(func() error {
		return e.audited(ctx, p, b.AccountID, "target.unbind", "target "+i64(t.ID)+" ("+t.Name+") of bot "+i64(b.ID), func(ctx context.Context, tx Tx, ev *txEvents) (string, error) {
			now := e.clock.Now()
			if err := tx.UnbindTarget(ctx, t.ID, now); err != nil {
				return "", err
			}
			var err error
			canceled, err = e.cancelQueued(ctx, tx, ev, t.BotID, t.ID, "the target was unbound", now)
			return "", err
		})
	})
	if err != nil {
		return 0, err
	}
	e.notify(ctx, canceled...)
	return len(canceled), nil
}

// Get returns a target of a bot the principal sees; any other is
// NotFound, as if it did not exist.
func (s *TargetService) Get(ctx context.Context, p Principal, id int64) (Target, error) {
	t, err := s.e.store.Target(ctx, id)
	if IsKind(err, NotFound) {
		return Target{}, Errorf(NotFound, "target_not_found", "target %d does not exist", id)
	}
	if err != nil {
		return Target{}, err
	}
	if _, err := s.e.Bots().Get(ctx, p, t.BotID); err != nil {
		if IsKind(err, NotFound) {
			return Target{}, Errorf(NotFound, "target_not_found", "target %d does not exist", id)
		}
		return Target{}, err
	}
	return t, nil
}

// List lists a bot's targets, newest first.
func (s *TargetService) List(ctx context.Context, p Principal, f TargetFilter) (Page[Target], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[Target]{}, err
	}
	if _, err := s.e.Bots().Get(ctx, p, f.BotID); err != nil {
		return Page[Target]{}, err
	}
	f.Limit = limit + 1
	ts, err := s.e.store.Targets(ctx, f)
	if err != nil {
		return Page[Target]{}, err
	}
	return pageOf(ts, limit, func(t Target) int64 { return t.ID }), nil
}

// validTargetTypes formats a platform's target types for messages.
func validTargetTypes(tts []TargetType) string {
	s := make([]string, len(tts))
	for i, t := range tts {
		s[i] = string(t)
	}
	return strings.Join(s, " or ")
}
