package push

import (
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
	Prefix    string // the part before the underscore, e.g. "hrd"
	Hash      string // hex SHA-256 of the whole plain key
	Hint      string // the last four characters, to tell keys apart in lists
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never expires
	RevokedAt time.Time // zero: not revoked
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
