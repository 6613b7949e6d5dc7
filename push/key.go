package push

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// DefaultKeyPrefix starts every newly generated API key, followed by an
// underscore.
const DefaultKeyPrefix = "hrd"

// keySecretLen is the number of random base62 characters after the prefix:
// 40 characters carry about 238 bits.
const keySecretLen = 40

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// APIKey identifies an account to the API. Only the SHA-256 hash of the key
// is stored; the plain key is shown once, when it is created.
type APIKey struct {
	ID        int64
	AccountID int64
	Name      string // to tell keys apart; may be empty
	Role      Role   // RoleMember, or RoleOperator for a key that acts on every account
	UserID    int64  // the user who made it; 0: an operator's tool (herald admin)
	Prefix    string // the part before the underscore, e.g. "hrd"
	Hash      string // hex SHA-256 of the whole plain key
	Hint      string // the last four characters, to tell keys apart in lists
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never expires
	RevokedAt time.Time // zero: not revoked
}

// KeyFilter selects an account's keys for List: newest first, at most
// Limit, after Cursor.
type KeyFilter struct {
	AccountID int64
	Limit     int
	Cursor    string
}

// KeyCreate is a new key: its account, a name to tell it apart, its
// lifetime (zero: it does not expire) and its role (default RoleMember;
// an operator key acts on every account, and only an operator may make
// one).
type KeyCreate struct {
	AccountID int64
	Name      string
	TTL       time.Duration
	Role      Role
}

// KeyService holds the verbs on API keys, and authentication by key. Get
// it from Engine.Keys.
type KeyService struct{ e *Engine }

// Keys returns the verbs on API keys.
func (e *Engine) Keys() *KeyService { return &e.keys }

// Create makes a new key for an account (the principal's own, or any for
// an operator) and returns it with the plain key, which is not stored and
// cannot be shown again.
func (s *KeyService) Create(ctx context.Context, p Principal, c KeyCreate) (APIKey, string, error) {
	plain := generateKey(s.e.keyPrefix)
	k, err := s.store(ctx, p, c, plain)
	return k, plain, err
}

// Import stores an existing plain key (for example one issued by an
// earlier system under a legacy prefix) for an account. Only an operator
// may.
func (s *KeyService) Import(ctx context.Context, p Principal, c KeyCreate, plain string) (APIKey, error) {
	if err := p.needOperator("import keys"); err != nil {
		return APIKey{}, err
	}
	prefix, ok := splitKey(plain)
	if !ok || !s.e.prefixes[prefix] {
		return APIKey{}, fieldErrorf(FieldAPIKey, "invalid_api_key", "the API key must look like <prefix>_<secret> with a configured prefix (%s)", strings.Join(s.e.prefixList(), ", "))
	}
	if len(plain)-len(prefix)-1 < 16 {
		return APIKey{}, fieldErrorf(FieldAPIKey, "weak_api_key", "the API key's secret part is shorter than 16 characters").with("", 16)
	}
	return s.store(ctx, p, c, plain)
}

func (s *KeyService) store(ctx context.Context, p Principal, c KeyCreate, plain string) (APIKey, error) {
	e := s.e
	if !p.sees(c.AccountID) {
		return APIKey{}, accountNotFound(c.AccountID)
	}
	if c.TTL < 0 {
		return APIKey{}, Errorf(Invalid, "invalid_expiry", "a key's lifetime cannot be negative")
	}
	if c.Role == "" {
		c.Role = RoleMember
	}
	if !c.Role.Valid() {
		return APIKey{}, Errorf(Invalid, "invalid_role", "role %q is not known: use member or operator", truncate(string(c.Role), 40))
	}
	if c.Role == RoleOperator {
		if err := p.needOperator("make operator keys"); err != nil {
			return APIKey{}, err
		}
	}
	if c.Name != "" {
		if err := validateName("key", c.Name); err != nil {
			return APIKey{}, err
		}
	}
	prefix, _ := splitKey(plain)
	now := e.clock.Now()
	k := APIKey{AccountID: c.AccountID, Name: c.Name, Role: c.Role, UserID: p.UserID, Prefix: prefix, Hash: HashKey(plain), Hint: keyHint(plain), CreatedAt: now}
	if c.TTL > 0 {
		k.ExpiresAt = now.Add(c.TTL)
	}
	err := e.audited(ctx, p, c.AccountID, "key.create", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if _, err := tx.Account(ctx, c.AccountID); err != nil {
			return "", err
		}
		if err := tx.CreateAPIKey(ctx, &k); err != nil {
			return "", err
		}
		return "key " + i64(k.ID) + " (…" + k.Hint + ", " + string(k.Role) + ")", nil
	})
	if err != nil {
		return APIKey{}, err
	}
	return k, nil
}

// Get returns a key (its hash, never the plain key) of an account the
// principal sees.
func (s *KeyService) Get(ctx context.Context, p Principal, id int64) (APIKey, error) {
	k, err := s.e.store.APIKey(ctx, id)
	if IsKind(err, NotFound) || err == nil && !p.sees(k.AccountID) {
		return APIKey{}, Errorf(NotFound, "api_key_not_found", "API key %d does not exist", id)
	}
	return k, err
}

// List lists an account's keys (hashes only), newest first.
func (s *KeyService) List(ctx context.Context, p Principal, f KeyFilter) (Page[APIKey], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[APIKey]{}, err
	}
	if !p.sees(f.AccountID) {
		return Page[APIKey]{}, accountNotFound(f.AccountID)
	}
	if _, err := s.e.store.Account(ctx, f.AccountID); err != nil {
		return Page[APIKey]{}, err
	}
	f.Limit = limit + 1
	ks, err := s.e.store.APIKeys(ctx, f)
	if err != nil {
		return Page[APIKey]{}, err
	}
	return pageOf(ks, limit, func(k APIKey) int64 { return k.ID }), nil
}

// Revoke revokes a key at once, on every node. Revoking a revoked key
// changes nothing.
func (s *KeyService) Revoke(ctx context.Context, p Principal, id int64) (APIKey, error) {
	e := s.e
	k, err := s.Get(ctx, p, id)
	if err != nil {
		return APIKey{}, err
	}
	if !k.Revoked() {
		err := e.audited(ctx, p, k.AccountID, "key.revoke", "key "+i64(id)+" (…"+k.Hint+")", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
			return "", tx.RevokeAPIKey(ctx, id, e.clock.Now())
		})
		e.forgetAuth()
		if err != nil {
			return APIKey{}, err
		}
	}
	return e.store.APIKey(ctx, id)
}

// Revoked reports whether the key has been revoked.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// ExpiredAt reports whether the key has expired at time now.
func (k APIKey) ExpiredAt(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt)
}

// HashKey returns the stored form of a plain API key.
func HashKey(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// generateKey returns a new plain key: prefix, underscore, and 40 base62
// characters drawn uniformly from crypto/rand.
func generateKey(prefix string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + keySecretLen)
	b.WriteString(prefix)
	b.WriteByte('_')
	var buf [64]byte
	for n := 0; n < keySecretLen; {
		if _, err := rand.Read(buf[:]); err != nil {
			panic("push: crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			// 248 = 62*4: dropping bytes ≥ 248 keeps the choice uniform.
			if c >= 248 {
				continue
			}
			b.WriteByte(base62[c%62])
			n++
			if n == keySecretLen {
				break
			}
		}
	}
	return b.String()
}

// splitKey returns the prefix of a plain key ("hrd" in "hrd_…") and whether
// the key has the form prefix_secret with a non-empty secret of printable
// ASCII characters.
func splitKey(plain string) (prefix string, ok bool) {
	if len(plain) > 256 {
		return "", false
	}
	i := strings.IndexByte(plain, '_')
	if i <= 0 || i == len(plain)-1 {
		return "", false
	}
	for j := 0; j < len(plain); j++ {
		if c := plain[j]; c <= ' ' || c > '~' {
			return "", false
		}
	}
	return plain[:i], true
}

// keyHint returns the last four characters of a plain key.
func keyHint(plain string) string {
	if len(plain) <= 4 {
		return plain
	}
	return plain[len(plain)-4:]
}

// prefixList lists the key prefixes the engine accepts, the current one
// first.
func (e *Engine) prefixList() []string {
	out := []string{e.keyPrefix}
	for p := range e.prefixes {
		if p != e.keyPrefix {
			out = append(out, p)
		}
	}
	return out
}
