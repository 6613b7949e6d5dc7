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
		{"job", "resolve", "--id JOBID --outcome succeeded|failed [--note TEXT]", func() adminCmd { return &jobResolve{} }},
	}
}

type jobShow struct{ id string }

func (c *jobShow) flags(fs *flag.FlagSet) { fs.StringVar(&c.id, "id", "", "job id") }

func (c *jobShow) run(ctx context.Context, n *node.Node) (any, error) {
	j, err := n.Engine.Jobs().Get(ctx, push.System(), c.id)
	return transport.NewJobView(j), err
}

type jobResolve struct{ id, outcome, note string }

func (c *jobResolve) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.id, "id", "", "job id")
	fs.StringVar(&c.outcome, "outcome", "", "succeeded or failed")
	fs.StringVar(&c.note, "note", "", "what was checked, kept with the job")
}

func (c *jobResolve) run(ctx context.Context, n *node.Node) (any, error) {
	j, err := n.Engine.Jobs().Resolve(ctx, push.System(), c.id, push.State(strings.TrimSpace(c.outcome)), c.note)
	return transport.NewJobView(j), err
}
