package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

func jobCommands() []adminEntry {
	return []adminEntry{
		{"job", "show", "--id JOBID", func() adminCmd { return &jobShow{} }},
		{"job", "resolve", "--id JOBID --outcome succeeded|failed [--note TEXT]", func() adminCmd { return &jobResolve{} }},
		{"job", "list", "[--account ID] [--state S] [--bot ID] [--target ID] [--since T] [--until T] [--key K] [--limit 50] [--cursor C]", func() adminCmd { return &jobList{} }},
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

// jobListItem is a job as job list prints it: as job show does, with its
// account.
type jobListItem struct {
	transport.JobView
	AccountID int64 `json:"accountId"`
}

type jobList struct {
	account, bot, target int64
	state, key, cursor   string
	since, until         string
	limit                int
	from, to             time.Time
}

func (c *jobList) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "only the jobs of this account (default: every account's)")
	fs.StringVar(&c.state, "state", "", "only jobs in this state: "+strings.Join(jobStates(), ", "))
	fs.Int64Var(&c.bot, "bot", 0, "only the jobs of this bot")
	fs.Int64Var(&c.target, "target", 0, "only the jobs to this target")
	fs.StringVar(&c.since, "since", "", "only jobs made at or after this time (RFC 3339, e.g. 2026-11-24T09:00:00Z)")
	fs.StringVar(&c.until, "until", "", "only jobs made before this time (RFC 3339)")
	fs.StringVar(&c.key, "key", "", "only the jobs of the send made with this Idempotency-Key")
	fs.IntVar(&c.limit, "limit", push.DefaultPageSize, fmt.Sprintf("jobs on the page (1 to %d)", push.MaxPageSize))
	fs.StringVar(&c.cursor, "cursor", "", "the next cursor a page printed: the page after it")
}

func jobStates() []string {
	var out []string
	for _, s := range push.States() {
		out = append(out, string(s))
	}
	return out
}

func (c *jobList) check() error {
	for _, t := range []struct {
		name, value string
		to          *time.Time
	}{{"since", c.since, &c.from}, {"until", c.until, &c.to}} {
		if t.value == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return fmt.Errorf("--%s: %q is not an RFC 3339 time: give one such as 2026-11-24T09:00:00Z", t.name, t.value)
		}
		*t.to = v
	}
	switch {
	case c.account < 0:
		return fmt.Errorf("--account: give an account id (1 or more), or leave it out for every account")
	case c.bot < 0:
		return fmt.Errorf("--bot: give a bot id (1 or more)")
	case c.target < 0:
		return fmt.Errorf("--target: give a target id (1 or more)")
	case c.limit < 1:
		// The engine reads 0 as its default; given as a flag, it is refused.
		return fmt.Errorf("--limit: the limit %d is not a page size: give 1 to %d", c.limit, push.MaxPageSize)
	}
	return nil
}

func (c *jobList) run(ctx context.Context, n *node.Node) (any, error) {
	p, err := n.Engine.Jobs().List(ctx, push.System(), push.JobFilter{AccountID: c.account, State: push.State(c.state), BotID: c.bot, TargetID: c.target,
		Since: c.from, Until: c.to, IdempotencyKey: c.key, Limit: c.limit, Cursor: c.cursor})
	if err != nil {
		return nil, err
	}
	out := struct {
		Items []jobListItem `json:"items"`
		Next  string        `json:"next"`
	}{Items: make([]jobListItem, 0, len(p.Items)), Next: p.Next}
	for _, j := range p.Items {
		out.Items = append(out.Items, jobListItem{transport.NewJobView(j), j.AccountID})
	}
	return out, nil
}
