package push

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

func TestGenerateKey(t *testing.T) {
	seen := make(map[string]bool)
	counts := make(map[rune]int)
	for i := 0; i < 2000; i++ {
		k := generateKey("hrd")
		if !strings.HasPrefix(k, "hrd_") {
			t.Fatalf("key %q lacks the hrd_ prefix", k)
		}
		secret := k[4:]
		if len(secret) != keySecretLen || keySecretLen < 32 {
			t.Fatalf("key %q has a secret of %d characters, want %d (at least 32)", k, len(secret), keySecretLen)
		}
		for _, c := range secret {
			if !strings.ContainsRune(base62, c) {
				t.Fatalf("key %q has %q, not base62", k, c)
			}
			counts[c]++
		}
		if seen[k] {
			t.Fatalf("generateKey repeated %q", k)
		}
		seen[k] = true
	}
	// Every base62 character shows up: the draw covers the whole alphabet.
	if len(counts) != 62 {
		t.Errorf("only %d of 62 characters were drawn", len(counts))
	}
}

func TestHashKey(t *testing.T) {
	sum := sha256.Sum256([]byte("hrd_abc"))
	if got, want := HashKey("hrd_abc"), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("HashKey = %s, want %s", got, want)
	}
}

func TestSplitKey(t *testing.T) {
	tests := []struct {
		in     string
		prefix string
		ok     bool
	}{
		{"hrd_abc", "hrd", true},
		{"msp_x_y", "msp", true},
		{"hrd_", "", false},
		{"_abc", "", false},
		{"hrdabc", "", false},
		{"hrd_a b", "", false},
		{"hrd_\x00", "", false},
		{"hrd_é", "", false},
		{strings.Repeat("a", 300) + "_b", "", false},
	}
	for _, tt := range tests {
		prefix, ok := splitKey(tt.in)
		if prefix != tt.prefix || ok != tt.ok {
			t.Errorf("splitKey(%q) = %q, %v; want %q, %v", tt.in, prefix, ok, tt.prefix, tt.ok)
		}
	}
}

func TestAPIKeyStates(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := APIKey{}
	if k.Revoked() || k.ExpiredAt(now) {
		t.Error("a fresh key is revoked or expired")
	}
	k.ExpiresAt = now
	if !k.ExpiredAt(now) || k.ExpiredAt(now.Add(-time.Nanosecond)) {
		t.Error("a key expires exactly at ExpiresAt")
	}
	k.RevokedAt = now
	if !k.Revoked() {
		t.Error("a key with RevokedAt is not revoked")
	}
}
