package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// APIKey is an API key of an account: its name, prefix and last four
// characters, never the key.
type APIKey struct {
	ID        int64     `json:"id"`
	AccountID int64     `json:"accountId"`
	Name      string    `json:"name"`
	Role      string    `json:"role"` // member or operator
	Prefix    string    `json:"prefix"`
	Hint      string    `json:"hint"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

// NewAPIKey is a key just made, with its secret, which is shown once.
type NewAPIKey struct {
	Key APIKey `json:"key"`
	// Secret is the key itself: Options.APIKey of a client.
	Secret string `json:"secret"`
}

// KeyCreate is a new API key.
type KeyCreate struct {
	// AccountID is the key's account (0: the caller's own).
	AccountID int64 `json:"accountId,omitempty"`
	// Name tells it apart, e.g. the program that uses it.
	Name string `json:"name,omitempty"`
	// ExpiresAt is when it expires (zero: never).
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Role is member (default) or operator (only operators make them).
	Role string `json:"role,omitempty"`
}

// KeyFilter chooses keys to list.
type KeyFilter struct {
	// AccountID is the account (0: the caller's own; operators name any).
	AccountID int64
	ListOptions
}

// KeyService is the API keys of the management API.
type KeyService struct{ c *Client }

// Keys returns the API keys of the management API.
func (c *Client) Keys() KeyService { return KeyService{c} }

// List returns a page of an account's keys.
func (s KeyService) List(ctx context.Context, f KeyFilter) (Page[APIKey], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	return list[APIKey](ctx, s.c, managePrefix+"/keys", q, f.ListOptions)
}

// Get returns a key.
func (s KeyService) Get(ctx context.Context, id int64) (APIKey, error) {
	return read[APIKey](ctx, s.c, idPath("keys", id), nil)
}

// Create makes a key and returns it with its secret, once: only its hash
// is stored.
func (s KeyService) Create(ctx context.Context, k KeyCreate) (NewAPIKey, error) {
	return write[NewAPIKey](ctx, s.c, http.MethodPost, managePrefix+"/keys", k)
}

// Revoke revokes a key: every node refuses it at once.
func (s KeyService) Revoke(ctx context.Context, id int64) (APIKey, error) {
	return write[APIKey](ctx, s.c, http.MethodDelete, idPath("keys", id), nil)
}
