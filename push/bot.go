package push

import (
	"context"
	"encoding/json"
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
// platform has validated the config.
func (s *BotService) Create(ctx context.Context, p Principal, b Bot) (Bot, error) {
	e := s.e
	if !p.sees(b.AccountID) {
		return Bot{}, accountNotFound(b.AccountID)
	}
	if err := validateName("bot", b.Name); err != nil {
		return Bot{}, err
	}
	pl, ok := e.platforms[b.Platform]
	if !ok {
		return Bot{}, Errorf(Invalid, "unknown_platform", "platform %q is not known: use one of %s", truncate(b.Platform, 40), strings.Join(e.PlatformNames(), ", "))
	}
	if len(b.Config) == 0 {
		b.Config = json.RawMessage("{}")
	}
	if !json.Valid(b.Config) {
		return Bot{}, fieldErrorf(FieldConfig, "invalid_config", "the bot config is not valid JSON")
	}
	if err := pl.ValidateConfig(b.Config); err != nil {
		if IsKind(err, Invalid) {
			return Bot{}, err
		}
		return Bot{}, fieldErrorf(FieldConfig, "invalid_config", "%s bot config: %v", b.Platform, err)
	}
	if _, err := e.store.Account(ctx, b.AccountID); err != nil {
		return Bot{}, err
	}
	b.ID = 0
	b.CreatedAt = e.clock.Now()
	if err := e.store.CreateBot(ctx, &b); err != nil {
		return Bot{}, err
	}
	return b, nil
}

// Get returns a bot of an account the principal sees; any other is
// NotFound, as if it did not exist.
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
