package push

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Bot sends messages on one platform on behalf of an account. Config holds
// the platform credentials and options as JSON; it is validated by the
// platform and never returned by any API.
type Bot struct {
	ID        int64
	AccountID int64
	Platform  string
	Name      string
	Config    json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time // zero: never changed
}

// BotUpdate changes a bot; nil fields stay as they are. The bot keeps its
// id, its targets and its jobs.
type BotUpdate struct {
	Name *string
	// Config replaces the credentials and options, after the platform
	// checked them (and verified them with the platform, with Verify).
	// Every node uses the new config for its next platform call within a
	// second.
	Config json.RawMessage
	Verify bool
}

// BotFilter selects an account's bots for List: newest first, at most
// Limit, after Cursor.
type BotFilter struct {
	AccountID int64
	Limit     int
	Cursor    string
}

// BotService holds the verbs on bots. Get it from Engine.Bots.
type BotService struct{ e *Engine }

// Bots returns the verbs on bots.
func (e *Engine) Bots() *BotService { return &e.bots }

// Create creates a bot in an account the principal sees, after its
// platform has validated the config. To verify the credentials with the
// platform first, call Check.
func (s *BotService) Create(ctx context.Context, p Principal, b Bot) (Bot, error) {
	e := s.e
	if !p.sees(b.AccountID) {
		return Bot{}, accountNotFound(b.AccountID)
	}
	if err := validateName("bot", b.Name); err != nil {
		return Bot{}, err
	}
	var err error
	if b.Config, err = e.validateConfig(b.Platform, b.Config); err != nil {
		return Bot{}, err
	}
	b.ID = 0
	b.CreatedAt, b.UpdatedAt = e.clock.Now(), time.Time{}
	err = e.audited(ctx, p, b.AccountID, "bot.create", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if _, err := tx.Account(ctx, b.AccountID); err != nil {
			return "", err
		}
		if err := tx.CreateBot(ctx, &b); err != nil {
			return "", err
		}
		return "bot " + i64(b.ID) + " (" + b.Platform + ", " + b.Name + ")", nil
	})
	if err != nil {
		return Bot{}, err
	}
	return b, nil
}

// validateConfig has the platform check a bot config; an empty one is {}.
func (e *Engine) validateConfig(platform string, config json.RawMessage) (json.RawMessage, error) {
	pl, ok := e.platforms[platform]
	if !ok {
		return nil, Errorf(Invalid, "unknown_platform", "platform %q is not known: use one of %s", truncate(platform, 40), strings.Join(e.PlatformNames(), ", "))
	}
	if len(config) == 0 {
		config = json.RawMessage("{}")
	}
	if !json.Valid(config) {
		return nil, fieldErrorf(FieldConfig, "invalid_config", "the bot config is not valid JSON")
	}
	if err := pl.ValidateConfig(config); err != nil {
		if IsKind(err, Invalid) {
			return nil, err
		}
		return nil, fieldErrorf(FieldConfig, "invalid_config", "%s bot config: %v", platform, err)
	}
	return config, nil
}

// Check validates a bot config and verifies its credentials with the
// platform, saving nothing. It reports whether the platform could verify
// them (false: the platform has no such call, and only the config's form
// was checked).
func (s *BotService) Check(ctx context.Context, p Principal, platform string, config json.RawMessage) (bool, error) {
	e := s.e
	config, err := e.validateConfig(platform, config)
	if err != nil {
		return false, err
	}
	return e.verify(ctx, platform, config)
}

// verify asks the platform to verify the credentials of a config.
func (e *Engine) verify(ctx context.Context, platform string, config json.RawMessage) (bool, error) {
	v, ok := e.platforms[platform].(Verifier)
	if !ok {
		return false, nil
	}
	vctx, cancel := context.WithTimeout(ctx, e.limits.AttemptTimeout)
	defer cancel()
	err := v.Verify(vctx, config)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrCannotVerify) {
		return false, nil
	}
	se := AsSendError(err)
	if se.Outcome == OutcomeDefinitive {
		return false, &Error{Kind: Invalid, Reason: "credentials_refused", Field: FieldConfig, Err: err,
			Message: platform + " refused the credentials: " + se.Error() + "; nothing was saved"}
	}
	// The platform could not be asked: a dependency is down (503), not a
	// failed send, and not the caller's mistake.
	return false, &Error{Kind: Unavailable, Reason: "platform_unreachable", Err: err, RetryAfter: se.RetryAfter,
		Message: platform + " could not be asked to verify the credentials: " + se.Error() + ": try again, or save without verifying"}
}

// Verify verifies a saved bot's credentials with its platform.
func (s *BotService) Verify(ctx context.Context, p Principal, id int64) (bool, error) {
	b, err := s.Get(ctx, p, id)
	if err != nil {
		return false, err
	}
	return s.e.verify(ctx, b.Platform, b.Config)
}

// Update renames a bot or replaces its credentials, keeping its id.
func (s *BotService) Update(ctx context.Context, p Principal, id int64, u BotUpdate) (Bot, error) {
	b, _, err := s.UpdateVerified(ctx, p, id, u)
	return b, err
}

// UpdateVerified is Update that also reports whether the platform
// verified the new credentials (false when u.Verify is false, or when the
// platform cannot verify them without sending).
func (s *BotService) UpdateVerified(ctx context.Context, p Principal, id int64, u BotUpdate) (Bot, bool, error) {
	e := s.e
	b, err := s.Get(ctx, p, id)
	if err != nil {
		return Bot{}, false, err
	}
	verified := false
	if u.Name != nil {
		if err := validateName("bot", *u.Name); err != nil {
			return Bot{}, false, err
		}
		b.Name = *u.Name
	}
	what := "name"
	if u.Config != nil {
		if b.Config, err = e.validateConfig(b.Platform, u.Config); err != nil {
			return Bot{}, false, err
		}
		if u.Verify {
			if verified, err = e.verify(ctx, b.Platform, b.Config); err != nil {
				return Bot{}, false, err
			}
		}
		what = "credentials"
		if u.Name != nil {
			what = "name and credentials"
		}
	}
	b.UpdatedAt = e.clock.Now()
	err = e.catalog.change(func() error {
		return e.audited(ctx, p, b.AccountID, "bot.update", "bot "+i64(b.ID)+" ("+b.Name+"): "+what, func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
			return "", tx.UpdateBot(ctx, b, u.Config != nil)
		})
	})
	if err != nil {
		return Bot{}, false, err
	}
	return b, verified, nil
}

// Delete deletes a bot: its queued jobs are canceled and their points
// returned (once), its running jobs finish, its credentials are erased,
// and sends to it are refused as to an unknown bot, on every node at once.
// The history of its finished jobs stays.
func (s *BotService) Delete(ctx context.Context, p Principal, id int64) (int, error) {
	e := s.e
	b, err := s.Get(ctx, p, id)
	if err != nil {
		return 0, err
	}
	var canceled []string
	err = e.catalog.change(func() error {
		return e.audited(ctx, p, b.AccountID, "bot.delete", "bot "+i64(b.ID)+" ("+b.Name+")", func(ctx context.Context, tx Tx, ev *txEvents) (string, error) {
			now := e.clock.Now()
			// The bot's backlog counter is closed first: no request can queue
			// a job for it once this commits, and the jobs queued before are
			// all found below.
			if err := tx.DeleteBot(ctx, b.ID, now); err != nil {
				return "", err
			}
			var err error
			canceled, err = e.cancelQueued(ctx, tx, ev, b.ID, 0, "the bot was deleted", now)
			return "", err
		})
	})
	if err != nil {
		return 0, err
	}
	e.notify(ctx, canceled...)
	return len(canceled), nil
}

// Get returns a bot of an account the principal sees; any other, or a
// deleted one, is NotFound, as if it did not exist.
func (s *BotService) Get(ctx context.Context, p Principal, id int64) (Bot, error) {
	b, err := s.e.store.Bot(ctx, id)
	if IsKind(err, NotFound) || err == nil && !p.sees(b.AccountID) {
		return Bot{}, botNotFound(id)
	}
	return b, err
}

// List lists an account's bots, newest first.
func (s *BotService) List(ctx context.Context, p Principal, f BotFilter) (Page[Bot], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[Bot]{}, err
	}
	if !p.sees(f.AccountID) {
		return Page[Bot]{}, accountNotFound(f.AccountID)
	}
	if _, err := s.e.store.Account(ctx, f.AccountID); err != nil {
		return Page[Bot]{}, err
	}
	f.Limit = limit + 1
	bs, err := s.e.store.Bots(ctx, f)
	if err != nil {
		return Page[Bot]{}, err
	}
	return pageOf(bs, limit, func(b Bot) int64 { return b.ID }), nil
}

func botNotFound(id int64) error {
	e := Errorf(NotFound, "bot_not_found", "bot %d does not exist in your account: check the bot id", id)
	e.Field = FieldBot
	return e
}
