package fake

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenBook is the access tokens a fake platform issued and the lifetime
// of new ones: what the fakes of platforms with a token endpoint share.
// Its own mutex is taken inside the fake's, never around it. A fake sets
// the first lifetime (lifespan) when it makes the book.
type tokenBook struct {
	bookMu   sync.Mutex
	lifespan time.Duration
	issued   map[string]issuedToken
}

// issuedToken is one access token: whom it was issued to and when it
// expires.
type issuedToken struct {
	owner   string // the app (WeCom: the corp) it was issued to
	agentID int64  // WeCom: the application
	expires time.Time
}

// SetTokenTTL sets the lifetime of tokens issued from now on.
func (b *tokenBook) SetTokenTTL(d time.Duration) {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	b.lifespan = d
}

// ExpireTokens makes every token issued so far expire now.
func (b *tokenBook) ExpireTokens() {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	past := time.Now().Add(-time.Second)
	for k, t := range b.issued {
		t.expires = past
		b.issued[k] = t
	}
}

// IssuedTokens returns every access token the fake handed out (to check
// that none leaks into an error).
func (b *tokenBook) IssuedTokens() []string {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	out := make([]string, 0, len(b.issued))
	for k := range b.issued {
		out = append(out, k)
	}
	return out
}

// ttl is the lifetime of a token issued now.
func (b *tokenBook) ttl() time.Duration {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	return b.lifespan
}

// issue records tok as issued to owner (and agentID) now, for the
// lifetime, and returns it.
func (b *tokenBook) issue(tok, owner string, agentID int64) issuedToken {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	if b.issued == nil {
		b.issued = make(map[string]issuedToken)
	}
	t := issuedToken{owner: owner, agentID: agentID, expires: time.Now().Add(b.lifespan)}
	b.issued[tok] = t
	return t
}

// lookup returns an issued token, expired or not.
func (b *tokenBook) lookup(tok string) (issuedToken, bool) {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	t, ok := b.issued[tok]
	return t, ok
}

// shorten makes tok expire at until if it would live longer.
func (b *tokenBook) shorten(tok string, until time.Time) {
	b.bookMu.Lock()
	defer b.bookMu.Unlock()
	if t, ok := b.issued[tok]; ok && t.expires.After(until) {
		t.expires = until
		b.issued[tok] = t
	}
}

// tokenState is what a token book makes of a token a request presented.
type tokenState int

const (
	tokenMissing tokenState = iota // the request presented none
	tokenUnknown                   // never issued
	tokenExpired
	tokenLive
)

// check looks up a token a request presented ("" for none).
func (b *tokenBook) check(tok string) (issuedToken, tokenState) {
	if tok == "" {
		return issuedToken{}, tokenMissing
	}
	t, ok := b.lookup(tok)
	switch {
	case !ok:
		return t, tokenUnknown
	case !time.Now().Before(t.expires):
		return t, tokenExpired
	}
	return t, tokenLive
}

// authToken is the token of an Authorization header in the scheme (e.g.
// "Bearer "), or "" when the header has none in it.
func authToken(r *http.Request, scheme string) string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), scheme); ok {
		return tok
	}
	return ""
}
