package push

import "context"

// maxCatalogEntries bounds each of the catalog's maps; a full map starts
// afresh.
const maxCatalogEntries = 10000

// catalog remembers bots and targets read from the store. They never
// change once created (there is no update or delete), so an entry is
// never stale; a missing one is read again.
type catalog struct {
	bots    memo[int64, Bot]
	targets memo[int64, Target]
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
	return c.bots.load(id, func() (Bot, error) { return r.Bot(ctx, id) })
}

// target returns a target from the catalog, or reads it through r.
func (c *catalog) target(ctx context.Context, r reader, id int64) (Target, error) {
	return c.targets.load(id, func() (Target, error) { return r.Target(ctx, id) })
}
