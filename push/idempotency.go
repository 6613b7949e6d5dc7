package push

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"
	"time"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted.
const MaxIdempotencyKey = 100

// RequestKind tells the three kinds of send apart for idempotency: the same
// key may not be used for a single send and then for a batch.
type RequestKind string

// Request kinds. The single-send endpoints (current and compatibility) are
// one kind.
const (
	KindSingle RequestKind = "single"
	KindBatch  RequestKind = "batch"
	KindMulti  RequestKind = "multi"
)

// IdempotencyRecord remembers which jobs a keyed request created, so that a
// resubmission with the same key and the same request returns those jobs.
type IdempotencyRecord struct {
	AccountID   int64
	Key         string
	Kind        RequestKind
	Fingerprint string
	JobIDs      []string
	CreatedAt   time.Time
}

// ValidateIdempotencyKey checks a client's Idempotency-Key: 1 to 100
// characters, each a letter, digit, underscore, colon or hyphen.
func ValidateIdempotencyKey(key string) error {
	if key == "" {
		return Errorf(Invalid, "invalid_idempotency_key", "the Idempotency-Key is empty: send 1 to %d characters of letters, digits, '_', ':' or '-', or leave the header out", MaxIdempotencyKey)
	}
	if len(key) > MaxIdempotencyKey {
		return Errorf(Invalid, "invalid_idempotency_key", "the Idempotency-Key is %d characters long; the limit is %d", len(key), MaxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ':' || c == '-' {
			continue
		}
		return Errorf(Invalid, "invalid_idempotency_key", "the Idempotency-Key has the character %q at position %d: use only letters, digits, '_', ':' and '-'", rune(c), i+1)
	}
	return nil
}

// Delivery points of a request, in the order given.
type destination struct {
	BotID    int64
	TargetID int64
}

// fingerprint returns the hex SHA-256 of the canonical form of a request:
// its kind, its destinations in order, the target type, and the message.
// Every field is length-prefixed, so no two different requests share a
// canonical form.
func fingerprint(kind RequestKind, dests []destination, targetType TargetType, m Message) string {
	h := sha256.New()
	writeField(h, string(kind))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(dests)))
	h.Write(n[:])
	for _, d := range dests {
		binary.BigEndian.PutUint64(n[:], uint64(d.BotID))
		h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(d.TargetID))
		h.Write(n[:])
	}
	writeField(h, string(targetType))
	writeField(h, strconv.Itoa(int(m.Type)))
	writeField(h, m.Content)
	writeField(h, m.ImageURL)
	writeField(h, strconv.FormatBool(m.Wakeup))
	return hex.EncodeToString(h.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
