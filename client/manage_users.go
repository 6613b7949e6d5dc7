package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// UserCreate is a new user, made by an operator.
type UserCreate struct {
	AccountID int64  `json:"accountId"`
	Email     string `json:"email"`
	// Password is 10 to 128 characters, hard to guess.
	Password string `json:"password"`
	// Role is member (default) or operator.
	Role string `json:"role,omitempty"`
}

// UserFilter chooses users to list.
type UserFilter struct {
	// AccountID is the account (0: a member's own; an operator's: every
	// user).
	AccountID int64
	ListOptions
}

// UserService is the people of the management API.
type UserService struct{ c *Client }

// Users returns the people of the management API.
func (c *Client) Users() UserService { return UserService{c} }

// List returns a page of users.
func (s UserService) List(ctx context.Context, f UserFilter) (Page[User], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	return list[User](ctx, s.c, managePrefix+"/users", q, f.ListOptions)
}

// Get returns a user.
func (s UserService) Get(ctx context.Context, id int64) (User, error) {
	return read[User](ctx, s.c, idPath("users", id), nil)
}

// Create makes a user with a password (operators; members invite).
func (s UserService) Create(ctx context.Context, u UserCreate) (User, error) {
	return write[User](ctx, s.c, http.MethodPost, managePrefix+"/users", u)
}

// Delete removes a user and ends its sessions.
func (s UserService) Delete(ctx context.Context, id int64) error {
	return s.c.change(ctx, http.MethodDelete, idPath("users", id), nil, nil)
}

// ResetPassword gives a user a new random password, returned once, and
// ends its sessions (operators).
func (s UserService) ResetPassword(ctx context.Context, id int64) (string, error) {
	var out struct {
		Password string `json:"password"`
	}
	err := s.c.change(ctx, http.MethodPost, idPath("users", id, "password"), nil, &out)
	return out.Password, err
}

// Invite is a one-time invitation to sign up.
type Invite struct {
	ID int64 `json:"id"`
	// AccountID is the account joined (0: the person signs up with an
	// account of their own).
	AccountID int64     `json:"accountId,omitempty"`
	Role      string    `json:"role"`
	Email     string    `json:"email,omitempty"`
	Hint      string    `json:"hint"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	UsedAt    time.Time `json:"usedAt,omitzero"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

// NewInvite is an invite just made, with its code, which is shown once.
type NewInvite struct {
	Invite Invite `json:"invite"`
	Code   string `json:"code"`
}

// InviteCreate is a new invite.
type InviteCreate struct {
	// AccountID is the account to join (0: the caller's own).
	AccountID int64 `json:"accountId,omitempty"`
	// NewAccount makes a sign-up with an account of one's own
	// (operators).
	NewAccount bool   `json:"newAccount,omitempty"`
	Role       string `json:"role,omitempty"`
	// Email is the only address that may use it (empty: any).
	Email string `json:"email,omitempty"`
	// ExpiresAt is when it expires (zero: in 7 days).
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// InviteFilter chooses invites to list.
type InviteFilter struct {
	AccountID int64
	ListOptions
}

// InviteService is the invites of the management API.
type InviteService struct{ c *Client }

// Invites returns the invites of the management API.
func (c *Client) Invites() InviteService { return InviteService{c} }

// List returns a page of invites.
func (s InviteService) List(ctx context.Context, f InviteFilter) (Page[Invite], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	return list[Invite](ctx, s.c, managePrefix+"/invites", q, f.ListOptions)
}

// Create makes an invite and returns its code, once.
func (s InviteService) Create(ctx context.Context, i InviteCreate) (NewInvite, error) {
	return write[NewInvite](ctx, s.c, http.MethodPost, managePrefix+"/invites", i)
}

// Revoke revokes an unused invite.
func (s InviteService) Revoke(ctx context.Context, id int64) (Invite, error) {
	return write[Invite](ctx, s.c, http.MethodDelete, idPath("invites", id), nil)
}

// AuditEntry is one change made through the management verbs.
type AuditEntry struct {
	ID        int64     `json:"id"`
	AccountID int64     `json:"accountId,omitempty"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Object    string    `json:"object"`
	Address   string    `json:"address"`
	At        time.Time `json:"at"`
}

// AuditFilter chooses audit entries to list.
type AuditFilter struct {
	// AccountID narrows the trail to one account (0: every one).
	AccountID int64
	ListOptions
}

// AuditService is the audit trail of the management API (operators).
type AuditService struct{ c *Client }

// Audit returns the audit trail of the management API.
func (c *Client) Audit() AuditService { return AuditService{c} }

// List returns a page of the audit trail.
func (s AuditService) List(ctx context.Context, f AuditFilter) (Page[AuditEntry], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	return list[AuditEntry](ctx, s.c, managePrefix+"/audit", q, f.ListOptions)
}

// Platform is a platform the server sends on.
type Platform struct {
	Name string `json:"name"`
	// Targets says whether its bots have targets.
	Targets     bool     `json:"targets"`
	TargetTypes []string `json:"targetTypes"`
	// Verifies says whether it can verify credentials without sending.
	Verifies bool `json:"verifies"`
}

// Platforms returns the platforms the server sends on.
func (c *Client) Platforms(ctx context.Context) ([]Platform, error) {
	var p Page[Platform]
	err := c.get(ctx, managePrefix+"/platforms", nil, &p)
	return p.Items, err
}
