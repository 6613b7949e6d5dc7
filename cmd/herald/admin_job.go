package main

import (
	"context"
	"flag"
	"strings"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

func jobCommands() []adminEntry {
	return []adminEntry{
		{"job", "show", "--id JOBID", func() adminCmd { return &jobShow{} }},
		{"job", "resolve", "--id JOBID --outcome succeeded|failed", func() adminCmd { return &jobResolve{} }},
	}
}

type jobShow struct{ id string }

func (c *jobShow) flags(fs *flag.FlagSet) { fs.StringVar(&c.id, "id", "", "job id") }

func (c *jobShow) run(ctx context.Context, n *node.Node) (any, error) {
	j, err := n.Engine.Jobs().Get(ctx, push.System(), c.id)
	return transport.NewJobView(j), err
}

type jobResolve struct{ id, outcome string }

func (c *jobResolve) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.id, "id", "", "job id")
	fs.StringVar(&c.outcome, "outcome", "", "succeeded or failed")
}

func (c *jobResolve) run(ctx context.Context, n *node.Node) (any, error) {
	j, err := n.Engine.Jobs().Resolve(ctx, push.System(), c.id, push.State(strings.TrimSpace(c.outcome)))
	return transport.NewJobView(j), err
}
