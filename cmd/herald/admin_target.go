package main

import (
	"context"
	"flag"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func targetCommands() []adminEntry {
	return []adminEntry{
		{"target", "bind", "--bot ID --type user|group --address A [--name N]", func() adminCmd { return &targetBind{} }},
		{"target", "list", "--bot ID", func() adminCmd { return &targetList{} }},
	}
}

// targetOut is a target as admin prints it.
type targetOut struct {
	ID      int64  `json:"id"`
	Bot     int64  `json:"bot"`
	Type    string `json:"type"`
	Address string `json:"address"`
}

func targetJSON(t push.Target) targetOut {
	return targetOut{ID: t.ID, Bot: t.BotID, Type: string(t.Type), Address: t.Address}
}

type targetBind struct {
	bot                int64
	typ, address, name string
}

func (c *targetBind) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.bot, "bot", 0, "bot id")
	fs.StringVar(&c.typ, "type", "", "user or group")
	fs.StringVar(&c.address, "address", "", "the platform's id of the user or group")
	fs.StringVar(&c.name, "name", "", "a name for the target (default: the address)")
}

func (c *targetBind) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("bot", c.bot > 0); err != nil {
		return nil, err
	}
	t, err := n.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: c.bot, Type: push.TargetType(c.typ), Address: c.address, Name: c.name})
	return targetJSON(t), err
}

type targetList struct{ bot int64 }

func (c *targetList) flags(fs *flag.FlagSet) { fs.Int64Var(&c.bot, "bot", 0, "bot id") }

func (c *targetList) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("bot", c.bot > 0); err != nil {
		return nil, err
	}
	return listAll(func(cursor string) (push.Page[push.Target], error) {
		return n.Engine.Targets().List(ctx, push.System(), push.TargetFilter{BotID: c.bot, Limit: push.MaxPageSize, Cursor: cursor})
	}, targetJSON)
}
