package password_test

import (
	"strings"
	"testing"

	"github.com/heraldpush/herald/password"
)

// cheap keeps the tests fast; the format and the rules are the same.
func cheap() password.Argon2id {
	return password.Argon2id{Params: password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}}
}

func TestHashAndVerify(t *testing.T) {
	h := cheap()
	hash, err := h.Hash("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=64,t=1,p=1$") || strings.Contains(hash, "horse") {
		t.Fatalf("hash %q", hash)
	}
	other, _ := h.Hash("correct horse battery staple")
	if other == hash {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	tests := []struct {
		name     string
		hasher   password.Argon2id
		password string
		ok       bool
		rehash   bool
	}{
		{"right", h, "correct horse battery staple", true, false},
		{"wrong", h, "correct horse battery stapler", false, false},
		{"empty", h, "", false, false},
		{"defaults changed: more memory", password.Argon2id{Params: password.Params{Memory: 128, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}}, "correct horse battery staple", true, true},
		{"defaults changed: more passes", password.Argon2id{Params: password.Params{Memory: 64, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}}, "correct horse battery staple", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, rehash, err := tt.hasher.Verify(tt.password, hash)
			if err != nil || ok != tt.ok || rehash != tt.rehash {
				t.Fatalf("Verify = %v, %v, %v; want %v, %v", ok, rehash, err, tt.ok, tt.rehash)
			}
		})
	}
}

func TestDefaultParams(t *testing.T) {
	p := password.DefaultParams()
	if p.Memory < 19*1024 || p.Time < 2 || p.Threads < 1 || p.SaltLen < 16 || p.KeyLen < 32 {
		t.Fatalf("defaults %+v are below OWASP's argon2id minimum (19 MiB, t=2, p=1)", p)
	}
	hash, err := password.New().Hash("x")
	if err != nil || !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("%q, %v", hash, err)
	}
}

func TestMalformedHashes(t *testing.T) {
	h := cheap()
	good, _ := h.Hash("pw")
	parts := strings.Split(good, "$")
	for _, bad := range []string{
		"",
		"plain",
		"$argon2i$v=19$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=16$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1$" + parts[4] + "$" + parts[5] + "$x",
		"$argon2id$v=19$m=99999999,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=0,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1,x=2$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1$!!$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$AA",
	} {
		if ok, _, err := h.Verify("pw", bad); ok || err == nil {
			t.Errorf("Verify(%q) = %v, %v; want an error", bad, ok, err)
		}
	}
}
