// Package password hashes users' passwords with argon2id (RFC 9106) for
// the push engine (push.PasswordHasher). A hash is stored in the PHC
// string format, parameters included, so that hashes made under older
// parameters still verify and are replaced at the next sign-in.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/push"
	"golang.org/x/crypto/argon2"
)

// Params are argon2id's costs.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8
	SaltLen uint32 // bytes
	KeyLen  uint32 // bytes
}

// DefaultParams are OWASP's recommendation for argon2id: 19 MiB, two
// passes, one thread (about 30 ms on one core of a current server).
func DefaultParams() Params {
	return Params{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}
}

// Argon2id is a push.PasswordHasher with the given parameters; hashes made
// with other parameters verify, and are reported for rehashing.
type Argon2id struct {
	Params Params
}

var _ push.PasswordHasher = Argon2id{}

// New returns a hasher with the default parameters.
func New() Argon2id { return Argon2id{Params: DefaultParams()} }

// Hash implements push.PasswordHasher:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>, base64 without padding.
func (a Argon2id) Hash(password string) (string, error) {
	p := a.Params
	if p.Memory == 0 || p.Time == 0 || p.Threads == 0 || p.SaltLen < 8 || p.KeyLen < 16 {
		return "", errors.New("password: argon2id parameters too small")
	}
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: read random salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify implements push.PasswordHasher. The comparison is in constant
// time; rehash is true when the hash's parameters are not a's.
func (a Argon2id) Verify(password, hash string) (ok, rehash bool, err error) {
	p, salt, key, err := parse(hash)
	if err != nil {
		return false, false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	ok = subtle.ConstantTimeCompare(got, key) == 1
	want := a.Params
	rehash = p.Memory != want.Memory || p.Time != want.Time || p.Threads != want.Threads ||
		uint32(len(salt)) != want.SaltLen || uint32(len(key)) != want.KeyLen
	return ok, rehash, nil
}

// maxMemory bounds the memory cost a stored hash may ask for (1 GiB), so
// that a corrupted or hostile hash cannot exhaust the server.
const maxMemory = 1 << 20

// parse reads a PHC string of argon2id.
func parse(hash string) (Params, []byte, []byte, error) {
	var p Params
	bad := func(what string) (Params, []byte, []byte, error) {
		return p, nil, nil, fmt.Errorf("password: the stored hash is not argon2id in the PHC format (%s)", what)
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return bad("fields")
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return bad("version")
	}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if !ok || err != nil {
			return bad("parameters")
		}
		switch k {
		case "m":
			p.Memory = uint32(n)
		case "t":
			p.Time = uint32(n)
		case "p":
			if n > 255 {
				return bad("threads")
			}
			p.Threads = uint8(n)
		default:
			return bad("parameter " + k)
		}
	}
	if p.Memory == 0 || p.Memory > maxMemory || p.Time == 0 || p.Time > 100 || p.Threads == 0 {
		return bad("costs")
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return bad("salt")
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 128 {
		return bad("key")
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}
