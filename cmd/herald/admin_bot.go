package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func botCommands() []adminEntry {
	return []adminEntry{
		{"bot", "create", "--account ID --platform P --name N --config JSON [--verify]", func() adminCmd { return &botCreate{} }},
		{"bot", "list", "--account ID", func() adminCmd { return &botList{} }},
		{"bot", "update", "--id ID [--name N] [--config JSON [--verify]]", func() adminCmd { return &botUpdate{} }},
		{"bot", "verify", "--id ID", func() adminCmd { return &botVerify{} }},
		{"bot", "delete", "--id ID", func() adminCmd { return &botDelete{} }},
	}
}

// botOut is a bot as admin prints it: never its config, which holds its
// credentials.
type botOut struct {
	ID       int64  `json:"id"`
	Account  int64  `json:"account"`
	Platform string `json:"platform"`
	Name     string `json:"name"`
}

func botJSON(b push.Bot) botOut {
	return botOut{ID: b.ID, Account: b.AccountID, Platform: b.Platform, Name: b.Name}
}

type botCreate struct {
	account                int64
	platform, name, config string
	verify                 bool
}

func (c *botCreate) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.StringVar(&c.platform, "platform", "", "platform, e.g. telegram")
	fs.StringVar(&c.name, "name", "", "bot name")
	fs.StringVar(&c.config, "config", "{}", "the platform's bot config as JSON (credentials; never printed)")
	fs.BoolVar(&c.verify, "verify", false, "verify the credentials with the platform before saving")
}

func (c *botCreate) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	if err := need("platform", c.platform != ""); err != nil {
		return nil, err
	}
	verified := false
	if c.verify {
		var err error
		if verified, err = n.Engine.Bots().Check(ctx, push.System(), c.platform, json.RawMessage(c.config)); err != nil {
			return nil, err
		}
	}
	b, err := n.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: c.account, Platform: c.platform, Name: c.name, Config: json.RawMessage(c.config)})
	if err != nil || !c.verify {
		return botJSON(b), err
	}
	return struct {
		botOut
		Verified bool `json:"verified"`
	}{botJSON(b), verified}, nil
}

type botList struct{ account int64 }

func (c *botList) flags(fs *flag.FlagSet) { fs.Int64Var(&c.account, "account", 0, "account id") }

func (c *botList) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	return listAll(func(cursor string) (push.Page[push.Bot], error) {
		return n.Engine.Bots().List(ctx, push.System(), push.BotFilter{AccountID: c.account, Limit: push.MaxPageSize, Cursor: cursor})
	}, botJSON)
}

type botUpdate struct {
	id           int64
	name, config optString
	verify       bool
}

func (c *botUpdate) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.id, "id", 0, "bot id")
	fs.Var(&c.name, "name", "the new name")
	fs.Var(&c.config, "config", "the whole new config as JSON, replacing the old one (credentials; never printed)")
	fs.BoolVar(&c.verify, "verify", false, "verify the new credentials with the platform before saving")
}

func (c *botUpdate) check() error {
	if err := need("id", c.id > 0); err != nil {
		return err
	}
	if !c.name.set && !c.config.set {
		return errors.New("give --name, --config or both: nothing to change")
	}
	if c.verify && !c.config.set {
		return errors.New("--verify verifies new credentials: give them with --config (herald admin bot verify checks the saved ones)")
	}
	return nil
}

func (c *botUpdate) run(ctx context.Context, n *node.Node) (any, error) {
	u := push.BotUpdate{Verify: c.verify}
	if c.name.set {
		u.Name = &c.name.v
	}
	if c.config.set {
		u.Config = json.RawMessage(c.config.v)
	}
	b, verified, err := n.Engine.Bots().UpdateVerified(ctx, push.System(), c.id, u)
	if err != nil {
		return nil, err
	}
	return struct {
		botOut
		Verified bool `json:"verified"`
	}{botJSON(b), verified}, nil
}

type botVerify struct{ id int64 }

func (c *botVerify) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "bot id") }

func (c *botVerify) check() error { return need("id", c.id > 0) }

func (c *botVerify) run(ctx context.Context, n *node.Node) (any, error) {
	ok, err := n.Engine.Bots().Verify(ctx, push.System(), c.id)
	if err != nil {
		return nil, err
	}
	return struct {
		ID       int64 `json:"id"`
		Verified bool  `json:"verified"`
	}{c.id, ok}, nil
}

// canceledOut is what a delete or an unbind prints: how many queued jobs
// it canceled (their points returned).
type canceledOut struct {
	ID       int64 `json:"id"`
	Canceled int   `json:"canceled"`
}

type botDelete struct{ id int64 }

func (c *botDelete) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "bot id") }

func (c *botDelete) check() error { return need("id", c.id > 0) }

func (c *botDelete) run(ctx context.Context, n *node.Node) (any, error) {
	canceled, err := n.Engine.Bots().Delete(ctx, push.System(), c.id)
	if err != nil {
		return nil, err
	}
	return canceledOut{c.id, canceled}, nil
}
