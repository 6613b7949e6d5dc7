// Package tokencache caches platform access tokens (QQ app tokens, WeChat
// and WeCom access tokens, Feishu tenant tokens) per set of credentials:
// one fetch at a time per credentials (single-flight), refresh ahead of
// expiry, and one refresh-and-retry when the platform says a token expired.
package tokencache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/heraldpush/herald/push"
)

// Token is an access token and when it stops working.
type Token struct {
	Value     string
	ExpiresAt time.Time
}

// FetchFunc asks the platform for a new token.
type FetchFunc func(ctx context.Context) (Token, error)

// Cache holds tokens by key. The zero value is not usable; call New.
type Cache struct {
	early time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	tok      Token
	got      time.Time     // when tok was fetched
	fetching chan struct{} // non-nil while a fetch is under way; closed when it ends
	err      error         // the last fetch's error, for its waiters
}

// Options configure a Cache.
type Options struct {
	// Early is how long before expiry a token is refreshed (default 5 min,
	// capped at half the token's life).
	Early time.Duration
	// Now tells the time (default time.Now).
	Now func() time.Time
}

// New returns an empty cache.
func New(opts Options) *Cache {
	if opts.Early <= 0 {
		opts.Early = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{early: opts.Early, now: opts.Now, entries: make(map[string]*entry)}
}

// Now tells the cache's time, so that providers compute a token's
// ExpiresAt from the same clock the cache compares it with.
func (c *Cache) Now() time.Time { return c.now() }

// Key derives a cache key from credentials without keeping them: the hex
// SHA-256 of the parts.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fresh reports whether e's token can still be used: it is refreshed Early
// before it expires, or halfway through its life if that is shorter.
func (c *Cache) fresh(e *entry) bool {
	if e.tok.Value == "" {
		return false
	}
	early := c.early
	if life := e.tok.ExpiresAt.Sub(e.got); life < 2*early {
		early = life / 2
	}
	return c.now().Add(early).Before(e.tok.ExpiresAt)
}

// Get returns the cached token for key, fetching a new one when there is
// none or it is about to expire. Concurrent callers for one key share one
// fetch; a caller whose ctx ends while it waits for another's fetch gets a
// retryable *push.SendError, since nothing was sent.
func (c *Cache) Get(ctx context.Context, key string, fetch FetchFunc) (string, error) {
	for {
		c.mu.Lock()
		e := c.entries[key]
		if e == nil {
			e = &entry{}
			c.entries[key] = e
		}
		if c.fresh(e) {
			v := e.tok.Value
			c.mu.Unlock()
			return v, nil
		}
		if e.fetching != nil {
			wait := e.fetching
			c.mu.Unlock()
			select {
			case <-wait:
				c.mu.Lock()
				err, tok := e.err, e.tok
				c.mu.Unlock()
				if err != nil {
					return "", err
				}
				if tok.Value != "" {
					return tok.Value, nil
				}
				continue
			case <-ctx.Done():
				// Nothing was sent: the call waited for its token.
				return "", &push.SendError{Outcome: push.OutcomeRetryable, Err: ctx.Err(),
					Message: "waiting for an access token: " + ctx.Err().Error() + "; nothing was sent"}
			}
		}
		done := make(chan struct{})
		e.fetching = done
		c.mu.Unlock()

		got := c.now()
		tok, err := fetch(ctx)
		c.mu.Lock()
		e.fetching = nil
		e.err = err
		if err == nil {
			e.tok, e.got = tok, got
		}
		close(done)
		c.mu.Unlock()
		if err != nil {
			return "", err
		}
		return tok.Value, nil
	}
}

// Invalidate drops the token for key if it is still the given value (a
// token the platform refused), so that the next Get fetches a new one. A
// newer token fetched meanwhile is kept.
func (c *Cache) Invalidate(key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil && e.tok.Value == value {
		e.tok = Token{}
	}
}

// Refused is a platform's answer refusing the access token a call used
// (expired, replaced, failed the check). DoRefreshing fetches a new token
// and tries the call once more when a call fails with it.
type Refused struct{ Err *push.SendError }

// Error is the refusal's text.
func (e *Refused) Error() string { return e.Err.Error() }

// Unwrap returns the platform's answer, a *push.SendError.
func (e *Refused) Unwrap() error { return e.Err }

// DoRefreshing calls call with a token for key. When the call fails with
// *Refused, the token is dropped, a new one fetched, and call tried once
// more; a freshly fetched token refused again is a definitive failure,
// and hint says what to check.
func DoRefreshing[T any](ctx context.Context, c *Cache, key string, fetch FetchFunc,
	call func(ctx context.Context, token string) (T, error), hint string) (T, error) {
	var zero T
	tok, err := c.Get(ctx, key, fetch)
	if err != nil {
		return zero, err
	}
	v, err := call(ctx, tok)
	var r *Refused
	if !errors.As(err, &r) {
		return v, err
	}
	c.Invalidate(key, tok)
	if tok, err = c.Get(ctx, key, fetch); err != nil {
		return zero, err
	}
	v, err = call(ctx, tok)
	if errors.As(err, &r) {
		return v, push.DefinitiveError(r.Err.Code, "%s: %s", r.Err.Message, hint)
	}
	return v, err
}
