package push

import (
	"context"
	"strconv"
	"time"
)

// Authenticate checks a plain API key and returns the principal it acts
// for. A missing or unknown key is
// Unauthenticated; a revoked or expired key, or a suspended account, is
// Forbidden.
//
// When the store counts revocations (AuthEpocher), a key that
// authenticated is remembered: the next requests with it cost one read of
// that count instead of reading the key and its account, and a revocation
// or an account status change, by this process or any other, ends every
// remembered key at once (within Options.AuthRecheck when set).
func (s *KeyService) Authenticate(ctx context.Context, plain string) (Principal, error) {
	e := s.e
	if plain == "" {
		return Principal{}, &Error{Kind: Unauthenticated, Reason: "missing_api_key", Field: FieldAPIKey, Message: "no API key was given: give the account's API key"}
	}
	prefix, ok := splitKey(plain)
	if !ok || !e.prefixes[prefix] {
		return Principal{}, invalidKey()
	}
	hash := HashKey(plain)
	var epoch int64
	if e.auth != nil {
		// The epoch is read before the key and the account, so that an
		// entry made from them never outlives a change made after.
		var err error
		if epoch, err = e.auth.epoch(ctx); err != nil {
			return Principal{}, err
		}
		if p, ok := e.auth.get(hash, epoch, e.clock.Now()); ok {
			return p, nil
		}
	}
	k, err := e.store.APIKeyByHash(ctx, hash)
	if IsKind(err, NotFound) {
		return Principal{}, invalidKey()
	}
	if err != nil {
		return Principal{}, err
	}
	if k.Revoked() {
		return Principal{}, Errorf(Forbidden, "key_revoked", "this API key was revoked: create a new key")
	}
	if k.ExpiredAt(e.clock.Now()) {
		return Principal{}, Errorf(Forbidden, "key_expired", "this API key expired on %s: create a new key", k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	a, err := e.store.Account(ctx, k.AccountID)
	if err != nil {
		return Principal{}, err
	}
	if a.Status != AccountActive {
		return Principal{}, Errorf(Forbidden, "account_suspended", "the account of this API key is %s: contact the operator", a.Status)
	}
	p := Principal{AccountID: k.AccountID, KeyID: k.ID, Role: k.Role}
	if !p.Role.Valid() {
		p.Role = RoleMember
	}
	if e.auth != nil {
		e.auth.put(hash, authEntry{principal: p, expiresAt: k.ExpiresAt, epoch: epoch})
	}
	return p, nil
}

func invalidKey() error {
	return &Error{Kind: Unauthenticated, Reason: "invalid_api_key", Field: FieldAPIKey, Message: "the API key is not valid: check the key, or create a new key"}
}

// Admit counts one request of the principal against the per-key rate
// limit. A refusal is TooMany with the time to wait.
func (s *KeyService) Admit(ctx context.Context, p Principal) (RateDecision, error) {
	e := s.e
	limit := e.limits.RatePerMinute
	if limit < 0 {
		return RateDecision{Allowed: true}, nil
	}
	// An API key's requests count on the key; a signed-in person's on the
	// person.
	bucket := "key:" + strconv.FormatInt(p.KeyID, 10)
	if p.KeyID == 0 && p.UserID != 0 {
		bucket = "user:" + strconv.FormatInt(p.UserID, 10)
	}
	d, err := e.limiter.Allow(ctx, bucket, limit, time.Minute)
	if err != nil {
		return d, err
	}
	if !d.Allowed {
		e.obs.RateLimited()
		wait := ceilSecond(d.RetryAfter)
		who := "this API key"
		if p.KeyID == 0 {
			who = "you"
		}
		return d, &Error{Kind: TooMany, Reason: "rate_limited", RetryAfter: wait,
			Message: "too many requests: " + who + " may make " + strconv.Itoa(limit) + " requests per minute; retry after " + wait.String()}
	}
	return d, nil
}

// ceilSecond rounds d up to a whole number of seconds, at least one.
func ceilSecond(d time.Duration) time.Duration {
	if d <= time.Second {
		return time.Second
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// forgetAuth ends every remembered authentication of this engine at once,
// after a change to a key or an account (the store's auth epoch tells
// other processes).
func (e *Engine) forgetAuth() {
	if e.auth != nil {
		e.auth.forget()
	}
}
