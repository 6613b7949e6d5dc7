package main

import (
	"context"
	"flag"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func accountCommands() []adminEntry {
	return []adminEntry{
		{"account", "create", "--name N", func() adminCmd { return &accountCreate{} }},
		{"account", "show", "--id ID", func() adminCmd { return &accountShow{} }},
		{"account", "list", "", func() adminCmd { return &accountList{} }},
		{"account", "suspend", "--id ID", func() adminCmd { return &accountSetStatus{status: push.AccountSuspended} }},
		{"account", "activate", "--id ID", func() adminCmd { return &accountSetStatus{status: push.AccountActive} }},
		{"account", "rename", "--id ID --name N", func() adminCmd { return &accountRename{} }},
	}
}

// accountOut is an account as admin prints it.
type accountOut struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Points int64  `json:"points"`
	Status string `json:"status"`
}

func accountJSON(a push.Account) accountOut {
	return accountOut{ID: a.ID, Name: a.Name, Points: a.Points, Status: string(a.Status)}
}

type accountCreate struct{ name string }

func (c *accountCreate) flags(fs *flag.FlagSet) { fs.StringVar(&c.name, "name", "", "account name") }

func (c *accountCreate) run(ctx context.Context, n *node.Node) (any, error) {
	a, err := n.Engine.Accounts().Create(ctx, push.System(), c.name)
	return accountJSON(a), err
}

type accountShow struct{ id int64 }

func (c *accountShow) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "account id") }

func (c *accountShow) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("id", c.id > 0); err != nil {
		return nil, err
	}
	a, err := n.Engine.Accounts().Get(ctx, push.System(), c.id)
	return accountJSON(a), err
}

type accountList struct{}

func (c *accountList) flags(*flag.FlagSet) {}

func (c *accountList) run(ctx context.Context, n *node.Node) (any, error) {
	return listAll(func(cursor string) (push.Page[push.Account], error) {
		return n.Engine.Accounts().List(ctx, push.System(), push.AccountFilter{Limit: push.MaxPageSize, Cursor: cursor})
	}, accountJSON)
}

type accountSetStatus struct {
	status push.AccountStatus
	id     int64
}

func (c *accountSetStatus) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "account id") }

func (c *accountSetStatus) run(ctx context.Context, n *node.Node) (any, error) {
	if err := need("id", c.id > 0); err != nil {
		return nil, err
	}
	a, err := n.Engine.Accounts().Update(ctx, push.System(), c.id, push.AccountUpdate{Status: &c.status})
	return accountJSON(a), err
}

type accountRename struct {
	id   int64
	name string
}

func (c *accountRename) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.id, "id", 0, "account id")
	fs.StringVar(&c.name, "name", "", "the new name")
}

func (c *accountRename) check() error { return need("id", c.id > 0) }

func (c *accountRename) run(ctx context.Context, n *node.Node) (any, error) {
	a, err := n.Engine.Accounts().Update(ctx, push.System(), c.id, push.AccountUpdate{Name: &c.name})
	return accountJSON(a), err
}
