package push

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted.
const MaxIdempotencyKey = 100

// RequestKind tells the three kinds of send apart for idempotency: the same
// key may not be used for a single send and then for a batch.
type RequestKind string

// Request kinds. The single-send endpoints (current and compatibility) are
// one kind.
const (
	RequestKindSingle RequestKind = "single"
	RequestKindBatch  RequestKind = "batch"
	RequestKindMulti  RequestKind = "multi"
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

// ValidateIdempotencyKey checks a client's idempotency key: 1 to 100
// characters, each a letter, digit, underscore, colon or hyphen.
func ValidateIdempotencyKey(key string) error {
	if key == "" {
		return fieldErrorf(FieldIdempotencyKey, "invalid_idempotency_key", "the idempotency key is empty: give 1 to %d characters of letters, digits, '_', ':' or '-', or leave it out", MaxIdempotencyKey).with("", MaxIdempotencyKey)
	}
	if n := utf8.RuneCountInString(key); n > MaxIdempotencyKey {
		return fieldErrorf(FieldIdempotencyKey, "invalid_idempotency_key", "the idempotency key is %d characters long; the limit is %d", n, MaxIdempotencyKey).with(truncate(key, 40), MaxIdempotencyKey)
	}
	pos := 0
	for _, c := range key {
		pos++
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ':' || c == '-' {
			continue
		}
		return fieldErrorf(FieldIdempotencyKey, "invalid_idempotency_key", "the idempotency key has the character %q at position %d: use only letters, digits, '_', ':' and '-'", c, pos).with(truncate(key, 40), MaxIdempotencyKey)
	}
	return nil
}

// Delivery points of a request, in the order given.
type destination struct {
	BotID    int64
	TargetID int64
}

// requestPrint is a request's fingerprints: the canonical one, which new
// records hold, and the one records written before it held (when it
// differs), which a resubmission of such a record still matches.
type requestPrint struct {
	canonical, earlier string
}

// matches reports whether a record's fingerprint is this request's.
func (p requestPrint) matches(recorded string) bool {
	return recorded == p.canonical || p.earlier != "" && recorded == p.earlier
}

// fingerprint returns the request's fingerprints. The canonical one
// compares meaning, not spelling: the message as normalized (an image URL
// given with or without msgType 7, or as the content of an image message,
// is one message; msgType 0, isWakeup false and an empty image URL are
// the values of leaving them out), and without the target type, which can
// only be the bound target's (replayable compares it with the jobs').
// The earlier one is the request as given, target type included.
func (s *submission) fingerprint() requestPrint {
	norm := s.msg.normalize()
	p := requestPrint{canonical: fingerprint(s.kind, s.dests, "", norm)}
	if s.targetType != "" || norm != s.msg {
		p.earlier = fingerprint(s.kind, s.dests, s.targetType, s.msg)
	}
	return p
}

// fingerprint returns the hex SHA-256 of the canonical form of a request:
// its kind, its destinations in order, the target type, and the message.
// Every field is length-prefixed, so no two different requests share a
// canonical form.
func fingerprint(kind RequestKind, dests []destination, targetType TargetType, m Message) string {
	// The canonical form is built in one buffer and hashed at once: fed
	// field by field to a hash.Hash, every field's bytes escaped to the
	// heap.
	typ, wakeup := strconv.Itoa(int(m.Type)), strconv.FormatBool(m.Wakeup)
	size := 7*8 + len(kind) + 16*len(dests) + len(targetType) + len(typ) + len(m.Content) + len(m.ImageURL) + len(wakeup)
	var stack [512]byte
	b := stack[:0]
	if size > len(stack) {
		b = make([]byte, 0, size)
	}
	b = appendField(b, string(kind))
	b = binary.BigEndian.AppendUint64(b, uint64(len(dests)))
	for _, d := range dests {
		b = binary.BigEndian.AppendUint64(b, uint64(d.BotID))
		b = binary.BigEndian.AppendUint64(b, uint64(d.TargetID))
	}
	b = appendField(b, string(targetType))
	b = appendField(b, typ)
	b = appendField(b, m.Content)
	b = appendField(b, m.ImageURL)
	b = appendField(b, wakeup)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// appendField appends s to b, prefixed with its length.
func appendField(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}
