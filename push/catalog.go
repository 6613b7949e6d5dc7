package push

import (
	"context"
	"sync/atomic"
	"time"
)

// maxCatalogEntries bounds each of the catalog's maps; a full map starts
// afresh.
const maxCatalogEntries = 10000

// catalogRecheck is how often the catalog asks the store whether a bot or
// a target changed anywhere: a change made on another node takes effect
// here within it.
const catalogRecheck = time.Second

// catalog remembers bots and targets read from the store, so that a send
// does not read them. They change rarely (renamed, new credentials,
// deleted, unbound): every change counts in the store's catalog epoch
// (CatalogEpocher), and the catalog starts afresh when it sees the epoch
// move, which it checks at most every catalogRecheck; this process's own
// changes empty it at once.
type catalog struct {
	bots    memo[int64, Bot]
	targets memo[int64, Target]

	epoch     atomic.Int64
	lastCheck atomic.Int64 // Unix ns of the last epoch read; 0: none
}

func (c *catalog) init() {
	c.bots.init(maxCatalogEntries, nil)
	c.targets.init(maxCatalogEntries, nil)
}

// reader reads bots and targets: the store, or a transaction.
type reader interface {
	Bot(ctx context.Context, id int64) (Bot, error)
	Target(ctx context.Context, id int64) (Target, error)
}

// bot returns a bot from the catalog, or reads it through r.
func (c *catalog) bot(ctx context.Context, r reader, id int64) (Bot, error) {
	c.check(ctx, r)
	return c.bots.load(id, func() (Bot, error) { return r.Bot(ctx, id) })
}

// target returns a target from the catalog, or reads it through r.
func (c *catalog) target(ctx context.Context, r reader, id int64) (Target, error) {
	c.check(ctx, r)
	return c.targets.load(id, func() (Target, error) { return r.Target(ctx, id) })
}

// check empties the catalog when the store's catalog epoch moved since the
// last check, reading it through r at most every catalogRecheck. A store
// that cannot tell (no CatalogEpocher) is trusted: its bots and targets
// change only through this engine.
func (c *catalog) check(ctx context.Context, r reader) {
	ep, ok := r.(CatalogEpocher)
	if !ok {
		return
	}
	now := time.Now().UnixNano()
	if last := c.lastCheck.Load(); last != 0 && now-last < int64(catalogRecheck) {
		return
	}
	n, err := ep.CatalogEpoch(ctx)
	if err != nil {
		return // a read that fails will fail again where it matters
	}
	if c.lastCheck.Swap(now) == 0 || c.epoch.Swap(n) != n {
		c.bots.forget()
		c.targets.forget()
	}
}

// change writes a change of bots or targets made by this process. While
// it is written the catalog is read through and remembers nothing, and
// after it, it starts afresh: a send that starts once the change is
// stored never finds what it replaced.
func (c *catalog) change(write func() error) error {
	c.bots.hold()
	c.targets.hold()
	defer func() {
		c.bots.release()
		c.targets.release()
	}()
	return write()
}
