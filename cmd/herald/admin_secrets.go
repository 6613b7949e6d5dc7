package main

import (
	"context"
	"flag"

	"github.com/heraldpush/herald/internal/node"
)

func secretsCommands() []adminEntry {
	return []adminEntry{
		{"secrets", "status", "", func() adminCmd { return &secretsCmd{} }},
		{"secrets", "rotate", "(re-seal bot credentials with the current secret key)", func() adminCmd { return &secretsCmd{rotate: true} }},
	}
}

// secretsCmd reports how the bot credentials in the database are sealed,
// after re-sealing them with the current secret key when rotate is set.
type secretsCmd struct{ rotate bool }

func (c *secretsCmd) flags(*flag.FlagSet) {}

func (c *secretsCmd) run(ctx context.Context, n *node.Node) (any, error) {
	var resealed *int
	if c.rotate {
		r, err := n.Store.RotateSecrets(ctx)
		if err != nil {
			return nil, err
		}
		resealed = &r
	}
	rep, err := n.Store.CheckSecrets(ctx)
	if err != nil {
		return nil, err
	}
	return secretsOut{Key: n.Store.SecretKeyID(), Bots: rep.Bots, Plain: rep.Plain, ByKey: rep.ByKey, Unopened: rep.Unopened, Resealed: resealed}, nil
}

// secretsOut is how the bot credentials in the database are sealed.
type secretsOut struct {
	Key      string         `json:"key"` // the id of the key that seals new credentials
	Bots     int            `json:"bots"`
	Plain    int            `json:"plain"`
	ByKey    map[string]int `json:"by_key"`
	Unopened int            `json:"unopened"`
	Resealed *int           `json:"resealed,omitempty"`
}
