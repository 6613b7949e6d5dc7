package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Account is an account: the unit that owns bots, targets, keys, jobs
// and points.
type Account struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status"` // active or suspended
	Points    int64     `json:"points"`
	CreatedAt time.Time `json:"createdAt"`
}

// AccountUpdate changes an account; nil fields stay as they are.
type AccountUpdate struct {
	Name *string `json:"name,omitempty"`
	// Status is "active" or "suspended" (operators).
	Status *string `json:"status,omitempty"`
}

// AccountService is the accounts of the management API.
type AccountService struct{ c *Client }

// Accounts returns the accounts of the management API.
func (c *Client) Accounts() AccountService { return AccountService{c} }

// List returns a page of accounts: every one for an operator, a member's
// own.
func (s AccountService) List(ctx context.Context, o ListOptions) (Page[Account], error) {
	return list[Account](ctx, s.c, managePrefix+"/accounts", nil, o)
}

// Get returns an account with its balance.
func (s AccountService) Get(ctx context.Context, id int64) (Account, error) {
	return read[Account](ctx, s.c, idPath("accounts", id), nil)
}

// Create makes an account with its initial points (operators).
func (s AccountService) Create(ctx context.Context, name string) (Account, error) {
	return write[Account](ctx, s.c, http.MethodPost, managePrefix+"/accounts", map[string]string{"name": name})
}

// Update renames an account, or suspends or activates it (operators).
func (s AccountService) Update(ctx context.Context, id int64, u AccountUpdate) (Account, error) {
	return write[Account](ctx, s.c, http.MethodPatch, idPath("accounts", id), u)
}

// LedgerEntry is one movement of an account's points.
type LedgerEntry struct {
	ID        int64 `json:"id"`
	AccountID int64 `json:"accountId"`
	// JobID is the job charged or refunded (empty for a grant).
	JobID string `json:"jobId,omitempty"`
	// Kind is what moved the points: charge, refund, initial, grant, …
	Kind   string    `json:"kind"`
	Amount int64     `json:"amount"`
	At     time.Time `json:"at"`
	Note   string    `json:"note,omitempty"`
}

// LedgerFilter chooses ledger entries to list.
type LedgerFilter struct {
	// AccountID is the account (0: the caller's own; operators name any).
	AccountID int64
	ListOptions
}

// LedgerService is the points ledger of the management API.
type LedgerService struct{ c *Client }

// Ledger returns the points ledger of the management API.
func (c *Client) Ledger() LedgerService { return LedgerService{c} }

// List returns a page of an account's ledger, which sums to its balance.
func (s LedgerService) List(ctx context.Context, f LedgerFilter) (Page[LedgerEntry], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	return list[LedgerEntry](ctx, s.c, managePrefix+"/ledger", q, f.ListOptions)
}

// Grant adds points to an account (a negative amount deducts them, never
// below zero) with a reason kept in the ledger, and returns the account
// with its new balance (operators).
func (s LedgerService) Grant(ctx context.Context, accountID, amount int64, reason string) (Account, error) {
	return write[Account](ctx, s.c, http.MethodPost, managePrefix+"/ledger",
		map[string]any{"accountId": accountID, "amount": amount, "reason": reason})
}
