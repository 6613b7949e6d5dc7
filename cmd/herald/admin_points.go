package main

import (
	"context"
	"flag"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func pointsCommands() []adminEntry {
	return []adminEntry{
		{"points", "set", "--account ID --balance N", func() adminCmd { return &pointsSet{} }},
		{"points", "grant", "--account ID --amount N --reason TEXT", func() adminCmd { return &pointsGrant{} }},
		{"points", "ledger", "--account ID", func() adminCmd { return &pointsLedger{} }},
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

type pointsGrant struct {
	account, amount int64
	reason          string
}

func (c *pointsGrant) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.Int64Var(&c.amount, "amount", 0, "points to add; a negative number deducts them (never below zero)")
	fs.StringVar(&c.reason, "reason", "", "why, kept in the ledger")
}

func (c *pointsGrant) check() error { return need("account", c.account > 0) }

func (c *pointsGrant) run(ctx context.Context, n *node.Node) (any, error) {
	a, err := n.Engine.Ledger().Grant(ctx, push.System(), c.account, c.amount, c.reason)
	if err != nil {
		return nil, err
	}
	return accountJSON(a), nil
}

// ledgerOut is a movement of an account's points as admin prints it.
type ledgerOut struct {
	ID      int64     `json:"id"`
	Account int64     `json:"account"`
	Kind    string    `json:"kind"`
	Amount  int64     `json:"amount"`
	Job     string    `json:"job,omitempty"`
	At      time.Time `json:"at"`
	Note    string    `json:"note"`
}

func ledgerJSON(e push.LedgerEntry) ledgerOut {
	return ledgerOut{ID: e.ID, Account: e.AccountID, Kind: string(e.Kind), Amount: e.Amount, Job: e.JobID, At: e.At.UTC(), Note: e.Note}
}

type pointsLedger struct{ account int64 }

func (c *pointsLedger) flags(fs *flag.FlagSet) { fs.Int64Var(&c.account, "account", 0, "account id") }

func (c *pointsLedger) check() error { return need("account", c.account > 0) }

func (c *pointsLedger) run(ctx context.Context, n *node.Node) (any, error) {
	return listAll(func(cursor string) (push.Page[push.LedgerEntry], error) {
		return n.Engine.Ledger().List(ctx, push.System(), push.LedgerFilter{AccountID: c.account, Limit: push.MaxPageSize, Cursor: cursor})
	}, ledgerJSON)
}
