package push

import (
	"context"
	"sync/atomic"
	"time"
)

// maxAuthEntries bounds the authentication cache; when it is full it
// starts afresh.
const maxAuthEntries = 10000

// authEntry is a key that authenticated, as it stood under one auth epoch.
type authEntry struct {
	principal Principal
	expiresAt time.Time // the key's or the session's; zero: never
	epoch     int64
	seen      time.Time // a session's last-seen time, as stored
}

// authCache remembers successful authentications, so that a request costs
// one read of the store's auth epoch instead of reading its key and its
// account. An entry counts only under the epoch it was made in: a
// revocation or an account status change, which moves the epoch, ends
// every entry at once.
type authCache struct {
	epocher AuthEpocher
	recheck time.Duration // how long a read epoch is trusted; 0: read it for every request

	entries memo[string, authEntry] // by key hash

	lastEpoch atomic.Int64
	lastRead  atomic.Int64 // Unix ns of the last epoch read; 0: none
}

func newAuthCache(store Store, recheck time.Duration) *authCache {
	ep, ok := store.(AuthEpocher)
	if !ok {
		return nil // the store cannot tell of revocations: no cache
	}
	c := &authCache{epocher: ep, recheck: recheck}
	c.entries.init(maxAuthEntries, nil)
	return c
}

// epoch returns the store's current auth epoch (or the one read within
// the recheck interval).
func (c *authCache) epoch(ctx context.Context) (int64, error) {
	if c.recheck > 0 {
		if last := c.lastRead.Load(); last != 0 && time.Since(time.Unix(0, last)) < c.recheck {
			return c.lastEpoch.Load(), nil
		}
	}
	n, err := c.epocher.AuthEpoch(ctx)
	if err != nil {
		return 0, err
	}
	c.lastEpoch.Store(n)
	c.lastRead.Store(time.Now().UnixNano())
	return n, nil
}

// get returns the principal of a cached key valid under epoch at now.
func (c *authCache) get(hash string, epoch int64, now time.Time) (Principal, bool) {
	e, ok := c.entries.get(hash)
	if !ok || e.epoch != epoch || !e.expiresAt.IsZero() && !now.Before(e.expiresAt) {
		return Principal{}, false
	}
	return e.principal, true
}

func (c *authCache) put(hash string, e authEntry) { c.entries.put(hash, e) }

// forget ends every entry at once (this process changed a key or an
// account).
func (c *authCache) forget() {
	c.entries.forget()
	c.lastRead.Store(0)
}
