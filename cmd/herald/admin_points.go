package main

import (
	"context"
	"flag"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func pointsCommands() []adminEntry {
	return []adminEntry{
		{"points", "set", "--account ID --balance N", func() adminCmd { return &pointsSet{} }},
	}
}

type pointsSet struct{ account, balance int64 }

func (c *pointsSet) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.Int64Var(&c.balance, "balance", -1, "the new balance")
}

func (c *pointsSet) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("account", c.account > 0); err != nil {
		return nil, err
	}
	if err := need("balance", c.balance >= 0); err != nil {
		return nil, err
	}
	a, err := n.Engine.Ledger().SetBalance(ctx, push.System(), c.account, c.balance)
	return accountJSON(a), err
}
