package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func inviteCommands() []adminEntry {
	return []adminEntry{
		{"invite", "create", "--account ID | --new-account [--role member|operator] [--email E] [--ttl 168h]", func() adminCmd { return &inviteCreate{} }},
		{"invite", "list", "[--account ID]", func() adminCmd { return &inviteList{} }},
		{"invite", "revoke", "--id ID", func() adminCmd { return &inviteRevoke{} }},
	}
}

// inviteOut is an invite as admin lists it: never its code or its hash;
// the hint (the code's last four characters) tells invites apart.
type inviteOut struct {
	ID        int64      `json:"id"`
	Account   *int64     `json:"account"` // null: the sign-up makes a new account
	Role      string     `json:"role"`
	Email     string     `json:"email"`
	Hint      string     `json:"hint"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	UsedAt    *time.Time `json:"used_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func inviteJSON(i push.Invite) inviteOut {
	o := inviteOut{ID: i.ID, Role: string(i.Role), Email: i.Email, Hint: i.Hint, CreatedAt: i.CreatedAt.UTC(), ExpiresAt: i.ExpiresAt.UTC(),
		UsedAt: optTime(i.UsedAt), RevokedAt: optTime(i.RevokedAt)}
	if i.AccountID != 0 {
		id := i.AccountID
		o.Account = &id
	}
	return o
}

type inviteCreate struct {
	account     int64
	newAccount  bool
	role, email string
	ttl         time.Duration
}

func (c *inviteCreate) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "the account the person joins")
	fs.BoolVar(&c.newAccount, "new-account", false, "the person signs up with an account of their own (instead of --account)")
	fs.StringVar(&c.role, "role", string(push.RoleMember), "the role the person gets: member or operator")
	fs.StringVar(&c.email, "email", "", "only this email address may use the invite (default: any)")
	fs.DurationVar(&c.ttl, "ttl", 168*time.Hour, "how long the invite lasts (1m to 90 days)")
}

func (c *inviteCreate) check() error {
	if (c.account > 0) == c.newAccount {
		return errors.New("--account or --new-account: give the account the person joins, or --new-account for an account of their own, not both")
	}
	if c.account < 0 {
		return errors.New("--account: give an account id (1 or more)")
	}
	if c.ttl <= 0 {
		return fmt.Errorf("--ttl: an invite lasts from a minute to 90 days, not %s", c.ttl)
	}
	return nil
}

func (c *inviteCreate) run(ctx context.Context, n *node.Node) (any, error) {
	inv, code, err := n.Engine.Invites().Create(ctx, push.System(), push.InviteCreate{AccountID: c.account, Role: push.Role(c.role), Email: c.email, TTL: c.ttl})
	if err != nil {
		return nil, err
	}
	return struct {
		inviteOut
		Code string `json:"code"`
	}{inviteJSON(inv), code}, nil
}

type inviteList struct{ account int64 }

func (c *inviteList) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id (default: every account's invites and the sign-up ones)")
}

func (c *inviteList) run(ctx context.Context, n *node.Node) (any, error) {
	return listAll(func(cursor string) (push.Page[push.Invite], error) {
		return n.Engine.Invites().List(ctx, push.System(), push.InviteFilter{AccountID: c.account, Limit: push.MaxPageSize, Cursor: cursor})
	}, inviteJSON)
}

type inviteRevoke struct{ id int64 }

func (c *inviteRevoke) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "invite id") }

func (c *inviteRevoke) check() error { return need("id", c.id > 0) }

func (c *inviteRevoke) run(ctx context.Context, n *node.Node) (any, error) {
	inv, err := n.Engine.Invites().Revoke(ctx, push.System(), c.id)
	if err != nil {
		return nil, err
	}
	return inviteJSON(inv), nil
}
