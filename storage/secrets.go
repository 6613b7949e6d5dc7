package storage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretKeySize is the size of a key for Sealer: 32 bytes, AES-256.
const SecretKeySize = 32

// sealedPrefix starts every sealed value: "enc:v1:<key id>:<base64>".
const sealedPrefix = "enc:v1:"

// sealedAAD binds sealed values to their use, so a sealed bot config cannot
// be passed off as another kind of value.
const sealedAAD = "herald bot config"

// Sealer encrypts bot credentials at rest with AES-256-GCM. It seals with
// its primary key and opens values sealed with the primary key or any of
// the older keys it was given, so that keys can be rotated: start every
// node with the new key as primary and the old one as older, re-seal every
// value (RotateSecrets), then drop the old key.
type Sealer struct {
	primaryID string
	keys      map[string]cipher.AEAD // by key id
}

// NewSealer returns a Sealer with a primary key and older keys, each
// SecretKeySize bytes.
func NewSealer(primary []byte, older ...[]byte) (*Sealer, error) {
	s := &Sealer{keys: make(map[string]cipher.AEAD)}
	for i, k := range append([][]byte{primary}, older...) {
		if len(k) != SecretKeySize {
			return nil, fmt.Errorf("storage: a secret key is %d bytes, not %d", len(k), SecretKeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(k)
		if i == 0 {
			s.primaryID = id
		}
		s.keys[id] = aead
	}
	return s, nil
}

// KeyID names a key without revealing it: the first 8 hex digits of its
// SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// NewSecretKey returns a random key for NewSealer.
func NewSecretKey() []byte {
	k := make([]byte, SecretKeySize)
	if _, err := rand.Read(k); err != nil {
		panic("storage: crypto/rand failed: " + err.Error())
	}
	return k
}

// ParseSecretKey reads a key written as base64 (standard or URL alphabet,
// padded or not) or hex.
func ParseSecretKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, dec := range []func(string) ([]byte, error){
		hex.DecodeString,
		base64.StdEncoding.DecodeString,
		base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString,
		base64.RawURLEncoding.DecodeString,
	} {
		if k, err := dec(s); err == nil && len(k) == SecretKeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("a secret key is %d random bytes written as base64 or hex (e.g. the output of: openssl rand -base64 32)", SecretKeySize)
}

// EncodeSecretKey writes a key the way ParseSecretKey reads it (base64).
func EncodeSecretKey(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

// Seal encrypts plain with the primary key.
func (s *Sealer) Seal(plain []byte) string {
	aead := s.keys[s.primaryID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("storage: crypto/rand failed: " + err.Error())
	}
	sealed := aead.Seal(nonce, nonce, plain, []byte(sealedAAD))
	return sealedPrefix + s.primaryID + ":" + base64.RawStdEncoding.EncodeToString(sealed)
}

// errUnknownKey reports a value sealed with a key the Sealer does not have.
type errUnknownKey struct{ id string }

func (e errUnknownKey) Error() string {
	return fmt.Sprintf("bot credentials are sealed with secret key %s, which is not configured: give that key (as the secret key, or among the old ones)", e.id)
}

// Open decrypts a sealed value. A value that is not sealed (stored before
// encryption was on) is returned as it is.
func (s *Sealer) Open(stored string) ([]byte, error) {
	id, payload, sealed := splitSealed(stored)
	if !sealed {
		return []byte(stored), nil
	}
	aead, ok := s.keys[id]
	if !ok {
		return nil, errUnknownKey{id}
	}
	raw, err := base64.RawStdEncoding.DecodeString(payload)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, errors.New("a sealed bot config is damaged")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(sealedAAD))
	if err != nil {
		return nil, fmt.Errorf("a bot config sealed with key %s does not open with it: the key or the value is wrong", id)
	}
	return plain, nil
}

// Current reports whether a stored value is sealed with the primary key.
func (s *Sealer) Current(stored string) bool {
	id, _, sealed := splitSealed(stored)
	return sealed && id == s.primaryID
}

func splitSealed(stored string) (id, payload string, sealed bool) {
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return "", "", false
	}
	id, payload, ok = strings.Cut(rest, ":")
	return id, payload, ok
}
