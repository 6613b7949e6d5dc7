package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Bot is a bot of an account. No answer holds its credentials.
type Bot struct {
	ID        int64     `json:"id"`
	AccountID int64     `json:"accountId"`
	Platform  string    `json:"platform"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when its name or credentials last changed (zero:
	// never).
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// SavedBot is a bot just made or changed, and whether the platform
// verified its credentials.
type SavedBot struct {
	Bot Bot `json:"bot"`
	// Verified is true when the platform accepted the credentials; false
	// when it was not asked, or cannot verify without sending.
	Verified bool `json:"verified"`
}

// BotCreate is a new bot.
type BotCreate struct {
	// AccountID is the bot's account (0: the caller's own).
	AccountID int64 `json:"accountId,omitempty"`
	// Platform is the platform's name, e.g. "telegram".
	Platform string `json:"platform"`
	// Name tells the bot apart.
	Name string `json:"name"`
	// Config is the platform's config: credentials and options.
	Config json.RawMessage `json:"config"`
	// Verify asks the platform to verify the credentials before saving
	// (nil: true).
	Verify *bool `json:"verify,omitempty"`
}

// BotUpdate changes a bot; nil fields stay as they are.
type BotUpdate struct {
	// Name is the new name.
	Name *string `json:"name,omitempty"`
	// Config replaces the whole config.
	Config json.RawMessage `json:"config,omitempty"`
	// Verify asks the platform to verify new credentials before saving
	// (nil: true).
	Verify *bool `json:"verify,omitempty"`
}

// BotFilter chooses bots to list.
type BotFilter struct {
	// AccountID is the account (0: the caller's own; operators name any).
	AccountID int64
	ListOptions
}

// BotService is the bots of the management API.
type BotService struct{ c *Client }

// Bots returns the bots of the management API.
func (c *Client) Bots() BotService { return BotService{c} }

// List returns a page of an account's bots.
func (s BotService) List(ctx context.Context, f BotFilter) (Page[Bot], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	return list[Bot](ctx, s.c, managePrefix+"/bots", q, f.ListOptions)
}

// Get returns a bot.
func (s BotService) Get(ctx context.Context, id int64) (Bot, error) {
	return read[Bot](ctx, s.c, idPath("bots", id), nil)
}

// Create makes a bot. Unless Verify is false, the platform verifies the
// credentials first: a refusal is ReasonCredentialsRefused, a platform
// that cannot be asked ReasonPlatformUnreachable, and nothing is saved.
func (s BotService) Create(ctx context.Context, b BotCreate) (SavedBot, error) {
	return write[SavedBot](ctx, s.c, http.MethodPost, managePrefix+"/bots", b)
}

// Update renames a bot or replaces its config (verified first, unless
// Verify is false), keeping its id, targets and jobs.
func (s BotService) Update(ctx context.Context, id int64, u BotUpdate) (SavedBot, error) {
	return write[SavedBot](ctx, s.c, http.MethodPatch, idPath("bots", id), u)
}

// Delete deletes a bot and returns how many of its queued jobs were
// canceled (their points returned).
func (s BotService) Delete(ctx context.Context, id int64) (int, error) {
	var out canceled
	err := s.c.change(ctx, http.MethodDelete, idPath("bots", id), nil, &out)
	return out.Canceled, err
}

// Verify asks the platform whether the bot's credentials still work. It
// returns false for a platform that cannot verify without sending.
func (s BotService) Verify(ctx context.Context, id int64) (bool, error) {
	var out struct {
		Verified bool `json:"verified"`
	}
	err := s.c.change(ctx, http.MethodPost, idPath("bots", id, "verify"), nil, &out)
	return out.Verified, err
}

// Target is a user or group bound to a bot.
type Target struct {
	ID        int64     `json:"id"`
	BotID     int64     `json:"botId"`
	Type      string    `json:"type"` // user or group
	Address   string    `json:"address"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	// Presence is active, or gone when the chat blocked or removed the
	// bot (sends to it are refused with ReasonTargetGone).
	Presence     string    `json:"presence"`
	PresenceAt   time.Time `json:"presenceAt,omitzero"`
	PresenceNote string    `json:"presenceNote,omitempty"`
}

// TargetBind is a target to bind.
type TargetBind struct {
	// Type is "user" or "group".
	Type string `json:"type"`
	// Address is the platform's id of the user or group.
	Address string `json:"address"`
	// Name tells it apart (default: the address).
	Name string `json:"name,omitempty"`
}

// TargetFilter chooses targets to list.
type TargetFilter struct {
	// BotID is the bot whose targets are listed.
	BotID int64
	ListOptions
}

// TargetService is the targets of the management API.
type TargetService struct{ c *Client }

// Targets returns the targets of the management API.
func (c *Client) Targets() TargetService { return TargetService{c} }

// List returns a page of a bot's targets.
func (s TargetService) List(ctx context.Context, f TargetFilter) (Page[Target], error) {
	return list[Target](ctx, s.c, idPath("bots", f.BotID, "targets"), nil, f.ListOptions)
}

// Get returns a target.
func (s TargetService) Get(ctx context.Context, id int64) (Target, error) {
	return read[Target](ctx, s.c, idPath("targets", id), nil)
}

// Bind binds a user or group of the platform to a bot. Binding the
// address of an unbound target binds it again, with its id.
func (s TargetService) Bind(ctx context.Context, botID int64, b TargetBind) (Target, error) {
	return write[Target](ctx, s.c, http.MethodPost, idPath("bots", botID, "targets"), b)
}

// Rename renames a target.
func (s TargetService) Rename(ctx context.Context, id int64, name string) (Target, error) {
	return write[Target](ctx, s.c, http.MethodPatch, idPath("targets", id), map[string]string{"name": name})
}

// Unbind unbinds a target and returns how many of its queued jobs were
// canceled (their points returned).
func (s TargetService) Unbind(ctx context.Context, id int64) (int, error) {
	var out canceled
	err := s.c.change(ctx, http.MethodDelete, idPath("targets", id), nil, &out)
	return out.Canceled, err
}
