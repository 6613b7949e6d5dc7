package main

import (
	"context"
	"encoding/json"
	"flag"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func botCommands() []adminEntry {
	return []adminEntry{
		{"bot", "create", "--account ID --platform P --name N --config JSON", func() adminCmd { return &botCreate{} }},
		{"bot", "list", "--account ID", func() adminCmd { return &botList{} }},
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
}

func (c *botCreate) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.StringVar(&c.platform, "platform", "", "platform, e.g. telegram")
	fs.StringVar(&c.name, "name", "", "bot name")
	fs.StringVar(&c.config, "config", "{}", "the platform's bot config as JSON (credentials; never printed)")
}

func (c *botCreate) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	if err := need("platform", c.platform != ""); err != nil {
		return nil, err
	}
	b, err := n.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: c.account, Platform: c.platform, Name: c.name, Config: json.RawMessage(c.config)})
	return botJSON(b), err
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
