package main

import (
	"context"
	"flag"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func keyCommands() []adminEntry {
	return []adminEntry{
		{"key", "create", "--account ID [--expires 720h]", func() adminCmd { return &keyCreate{} }},
		{"key", "import", "--account ID --key PLAIN [--expires D]", func() adminCmd { return &keyImport{} }},
		{"key", "list", "--account ID", func() adminCmd { return &keyList{} }},
		{"key", "revoke", "--id ID", func() adminCmd { return &keyRevoke{} }},
	}
}

// keyOut is a key as admin lists it: never its hash or secret.
type keyOut struct {
	ID        int64      `json:"id"`
	Account   int64      `json:"account"`
	Prefix    string     `json:"prefix"`
	Hint      string     `json:"hint"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	Revoked   bool       `json:"revoked"`
}

func keyJSON(k push.APIKey) keyOut {
	o := keyOut{ID: k.ID, Account: k.AccountID, Prefix: k.Prefix, Hint: k.Hint, CreatedAt: k.CreatedAt.UTC(), Revoked: k.Revoked()}
	if !k.ExpiresAt.IsZero() {
		t := k.ExpiresAt.UTC()
		o.ExpiresAt = &t
	}
	return o
}

type keyCreate struct {
	account int64
	expires time.Duration
}

func (c *keyCreate) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.DurationVar(&c.expires, "expires", 0, "lifetime of the key, e.g. 720h (default: never expires)")
}

func (c *keyCreate) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	k, plain, err := n.Engine.Keys().Create(ctx, push.System(), push.KeyCreate{AccountID: c.account, TTL: c.expires})
	if err != nil {
		return nil, err
	}
	return struct {
		ID      int64  `json:"id"`
		Account int64  `json:"account"`
		Key     string `json:"key"`
	}{k.ID, k.AccountID, plain}, nil
}

type keyImport struct {
	account int64
	key     string
	expires time.Duration
}

func (c *keyImport) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.StringVar(&c.key, "key", "", "the existing plain key (its prefix must be a configured one)")
	fs.DurationVar(&c.expires, "expires", 0, "lifetime of the key (default: never expires)")
}

func (c *keyImport) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	k, err := n.Engine.Keys().Import(ctx, push.System(), push.KeyCreate{AccountID: c.account, TTL: c.expires}, c.key)
	return keyJSON(k), err
}

type keyList struct{ account int64 }

func (c *keyList) flags(fs *flag.FlagSet) { fs.Int64Var(&c.account, "account", 0, "account id") }

func (c *keyList) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	return listAll(func(cursor string) (push.Page[push.APIKey], error) {
		return n.Engine.Keys().List(ctx, push.System(), push.KeyFilter{AccountID: c.account, Limit: push.MaxPageSize, Cursor: cursor})
	}, keyJSON)
}

type keyRevoke struct{ id int64 }

func (c *keyRevoke) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "key id") }

func (c *keyRevoke) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("id", c.id > 0); err != nil {
		return nil, err
	}
	k, err := n.Engine.Keys().Revoke(ctx, push.System(), c.id)
	return struct {
		ID      int64 `json:"id"`
		Revoked bool  `json:"revoked"`
	}{k.ID, k.Revoked()}, err
}
