package client

import (
	"context"
	"net/http"
	"time"
)

// BindCode is a one-time code with which a chat binds itself as a target
// of a bot: a person sends "bind <code>" to the bot. No answer but the
// one that made it holds the code.
type BindCode struct {
	ID    int64  `json:"id"`
	BotID int64  `json:"botId"`
	Hint  string `json:"hint"`
	// Type is the chats it binds: user, group, or empty for either.
	Type      string    `json:"type"`
	UsesLeft  int       `json:"usesLeft"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
	// LastTargetID is the target it bound last (0: none yet).
	LastTargetID int64 `json:"lastTargetId,omitempty"`
}

// NewBindCode is a bind code just made: the code, shown once, and how a
// person uses it.
type NewBindCode struct {
	BindCode BindCode `json:"bindCode"`
	Code     string   `json:"code"`
	// Command is what to send to the bot: bind <code>.
	Command string `json:"command"`
	// Link sends the code for the person (Telegram's deep link); empty
	// where the platform has none.
	Link string `json:"link"`
	// QRURL is a QR code that binds on scan (a WeChat service account's);
	// empty where the platform has none.
	QRURL string `json:"qrUrl"`
}

// BindCodeCreate is a new bind code.
type BindCodeCreate struct {
	// Type is the chats it binds: user, group, or empty for either.
	Type string `json:"type,omitempty"`
	// ExpiresAt is when it expires (zero: in a day; at most 30 days).
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Uses is how many chats it binds (0: one).
	Uses int `json:"uses,omitempty"`
}

// BindCodeFilter chooses bind codes to list.
type BindCodeFilter struct {
	BotID int64
	ListOptions
}

// BindCodeService is the bind codes of the management API.
type BindCodeService struct{ c *Client }

// BindCodes returns the bind codes of the management API.
func (c *Client) BindCodes() BindCodeService { return BindCodeService{c} }

// Create makes a bind code for a bot and returns it, once. The bot must
// hear its users (its config's receive setting).
func (s BindCodeService) Create(ctx context.Context, botID int64, b BindCodeCreate) (NewBindCode, error) {
	return write[NewBindCode](ctx, s.c, http.MethodPost, idPath("bots", botID, "bindcodes"), b)
}

// List returns a page of a bot's bind codes.
func (s BindCodeService) List(ctx context.Context, f BindCodeFilter) (Page[BindCode], error) {
	return list[BindCode](ctx, s.c, idPath("bots", f.BotID, "bindcodes"), nil, f.ListOptions)
}

// Revoke revokes a bind code: it binds nothing more.
func (s BindCodeService) Revoke(ctx context.Context, id int64) (BindCode, error) {
	return write[BindCode](ctx, s.c, http.MethodDelete, idPath("bindcodes", id), nil)
}
