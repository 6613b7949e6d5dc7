package push

import (
	"context"
	"sync"
)

// maxCatalogEntries bounds each of the catalog's maps; a full map starts
// afresh.
const maxCatalogEntries = 10000

// catalog remembers bots and targets read from the store. They never
// change once created (there is no update or delete), so an entry is
// never stale; a missing one is read again.
type catalog struct {
	mu      sync.RWMutex
	bots    map[int64]Bot
	targets map[int64]Target
}

func (c *catalog) init() {
	c.bots = make(map[int64]Bot)
	c.targets = make(map[int64]Target)
}

// reader reads bots and targets: the store, or a transaction.
type reader interface {
	Bot(ctx context.Context, id int64) (Bot, error)
	Target(ctx context.Context, id int64) (Target, error)
}

// bot returns a bot from the catalog, or reads it through r.
func (c *catalog) bot(ctx context.Context, r reader, id int64) (Bot, error) {
	c.mu.RLock()
	b, ok := c.bots[id]
	c.mu.RUnlock()
	if ok {
		return b, nil
	}
	b, err := r.Bot(ctx, id)
	if err != nil {
		return b, err
	}
	c.mu.Lock()
	if len(c.bots) >= maxCatalogEntries {
		clear(c.bots)
	}
	c.bots[id] = b
	c.mu.Unlock()
	return b, nil
}

// target returns a target from the catalog, or reads it through r.
func (c *catalog) target(ctx context.Context, r reader, id int64) (Target, error) {
	c.mu.RLock()
	t, ok := c.targets[id]
	c.mu.RUnlock()
	if ok {
		return t, nil
	}
	t, err := r.Target(ctx, id)
	if err != nil {
		return t, err
	}
	c.mu.Lock()
	if len(c.targets) >= maxCatalogEntries {
		clear(c.targets)
	}
	c.targets[id] = t
	c.mu.Unlock()
	return t, nil
}
