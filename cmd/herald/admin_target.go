package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func targetCommands() []adminEntry {
	return []adminEntry{
		{"target", "bind", "--bot ID --type user|group --address A [--name N]", func() adminCmd { return &targetBind{} }},
		{"target", "list", "--bot ID", func() adminCmd { return &targetList{} }},
		{"target", "rename", "--id ID --name N", func() adminCmd { return &targetRename{} }},
		{"target", "unbind", "--id ID", func() adminCmd { return &targetUnbind{} }},
		{"target", "invite", "--bot ID [--type user|group] [--ttl 24h] [--uses 1]", func() adminCmd { return &targetInvite{} }},
		{"target", "invites", "--bot ID", func() adminCmd { return &targetInvites{} }},
		{"target", "invite-revoke", "--id ID", func() adminCmd { return &targetInviteRevoke{} }},
	}
}

// targetOut is a target as admin prints it.
type targetOut struct {
	ID       int64  `json:"id"`
	Bot      int64  `json:"bot"`
	Type     string `json:"type"`
	Address  string `json:"address"`
	Name     string `json:"name"`
	Presence string `json:"presence"`
}

func targetJSON(t push.Target) targetOut {
	presence := t.Presence
	if presence == "" {
		presence = push.PresenceActive
	}
	return targetOut{ID: t.ID, Bot: t.BotID, Type: string(t.Type), Address: t.Address, Name: t.Name, Presence: string(presence)}
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

type targetRename struct {
	id   int64
	name string
}

func (c *targetRename) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.id, "id", 0, "target id")
	fs.StringVar(&c.name, "name", "", "the new name")
}

func (c *targetRename) check() error { return need("id", c.id > 0) }

func (c *targetRename) run(ctx context.Context, n *node.Node) (any, error) {
	t, err := n.Engine.Targets().Update(ctx, push.System(), c.id, push.TargetUpdate{Name: &c.name})
	if err != nil {
		return nil, err
	}
	return targetJSON(t), nil
}

type targetUnbind struct{ id int64 }

func (c *targetUnbind) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "target id") }

func (c *targetUnbind) check() error { return need("id", c.id > 0) }

func (c *targetUnbind) run(ctx context.Context, n *node.Node) (any, error) {
	canceled, err := n.Engine.Targets().Unbind(ctx, push.System(), c.id)
	if err != nil {
		return nil, err
	}
	return canceledOut{c.id, canceled}, nil
}

// bindCodeOut is a bind code (a target invite) as admin lists it: never
// the code or its hash; the hint (its last three characters) tells codes
// apart.
type bindCodeOut struct {
	ID         int64      `json:"id"`
	Bot        int64      `json:"bot"`
	Type       string     `json:"type"` // "": user or group
	Hint       string     `json:"hint"`
	UsesLeft   int        `json:"uses_left"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastTarget *int64     `json:"last_target"`
}

func bindCodeJSON(c push.BindCode) bindCodeOut {
	o := bindCodeOut{ID: c.ID, Bot: c.BotID, Type: string(c.Type), Hint: c.Hint, UsesLeft: c.UsesLeft, CreatedAt: c.CreatedAt.UTC(),
		ExpiresAt: c.ExpiresAt.UTC(), RevokedAt: optTime(c.RevokedAt)}
	if c.LastTargetID != 0 {
		id := c.LastTargetID
		o.LastTarget = &id
	}
	return o
}

type targetInvite struct {
	bot  int64
	typ  string
	ttl  time.Duration
	uses int
}

func (c *targetInvite) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.bot, "bot", 0, "bot id: the bot the person sends the code to")
	fs.StringVar(&c.typ, "type", "", "the chats the code binds: user or group (default: either)")
	fs.DurationVar(&c.ttl, "ttl", 24*time.Hour, "how long the code lasts (1m to 30 days)")
	fs.IntVar(&c.uses, "uses", 1, "how many chats the code binds (1 to 1000)")
}

func (c *targetInvite) check() error {
	if err := need("bot", c.bot > 0); err != nil {
		return err
	}
	// The engine reads 0 as its default; given as a flag, 0 is refused.
	if c.uses < 1 {
		return fmt.Errorf("--uses: a bind code binds 1 to 1000 chats, not %d", c.uses)
	}
	if c.ttl <= 0 {
		return fmt.Errorf("--ttl: a bind code lasts from a minute to 30 days, not %s", c.ttl)
	}
	return nil
}

func (c *targetInvite) run(ctx context.Context, n *node.Node) (any, error) {
	bc, err := n.Engine.BindCodes().Create(ctx, push.System(), push.BindCodeCreate{BotID: c.bot, Type: push.TargetType(c.typ), TTL: c.ttl, Uses: c.uses})
	if err != nil {
		return nil, err
	}
	return struct {
		bindCodeOut
		Code        string `json:"code"`
		Instruction string `json:"instruction"`
		Link        string `json:"link,omitempty"`
		QRURL       string `json:"qr_url,omitempty"`
	}{bindCodeJSON(bc.BindCode), bc.Code, "send `" + bc.Command + "` to the bot", bc.Link.URL, bc.Link.QRURL}, nil
}

type targetInvites struct{ bot int64 }

func (c *targetInvites) flags(fs *flag.FlagSet) { fs.Int64Var(&c.bot, "bot", 0, "bot id") }

func (c *targetInvites) check() error { return need("bot", c.bot > 0) }

func (c *targetInvites) run(ctx context.Context, n *node.Node) (any, error) {
	return listAll(func(cursor string) (push.Page[push.BindCode], error) {
		return n.Engine.BindCodes().List(ctx, push.System(), push.BindCodeFilter{BotID: c.bot, Limit: push.MaxPageSize, Cursor: cursor})
	}, bindCodeJSON)
}

type targetInviteRevoke struct{ id int64 }

func (c *targetInviteRevoke) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.id, "id", 0, "bind code id (from target invites)")
}

func (c *targetInviteRevoke) check() error { return need("id", c.id > 0) }

func (c *targetInviteRevoke) run(ctx context.Context, n *node.Node) (any, error) {
	bc, err := n.Engine.BindCodes().Revoke(ctx, push.System(), c.id)
	if err != nil {
		return nil, err
	}
	return bindCodeJSON(bc), nil
}
