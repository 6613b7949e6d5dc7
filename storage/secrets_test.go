package storage_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

func TestSealerRoundTrip(t *testing.T) {
	k1, k2 := storage.NewSecretKey(), storage.NewSecretKey()
	s, err := storage.NewSealer(k1)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"token":"123456:SECRET-token-value"}`)
	a, b := s.Seal(plain), s.Seal(plain)
	if a == b {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	if strings.Contains(a, "SECRET") || !strings.HasPrefix(a, "enc:v1:"+storage.KeyID(k1)+":") {
		t.Fatalf("sealed value %q", a)
	}
	if got, err := s.Open(a); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	// A value stored before encryption was on reads as it is.
	if got, err := s.Open(`{"token":"old"}`); err != nil || string(got) != `{"token":"old"}` {
		t.Fatalf("Open(plain) = %q, %v", got, err)
	}
	// Another key does not open it and says which key is missing.
	other, _ := storage.NewSealer(k2)
	if _, err := other.Open(a); err == nil || !strings.Contains(err.Error(), storage.KeyID(k1)) {
		t.Fatalf("Open with another key = %v", err)
	}
	// A tampered value does not open.
	tampered := a[:len(a)-2] + "AA"
	if _, err := s.Open(tampered); err == nil {
		t.Fatal("a tampered value opened")
	}
	// With k1 as an older key, a sealer on k2 opens values sealed with k1.
	rotated, _ := storage.NewSealer(k2, k1)
	if got, err := rotated.Open(a); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open with the old key listed = %q, %v", got, err)
	}
	if rotated.Current(a) || !rotated.Current(rotated.Seal(plain)) {
		t.Fatal("Current misjudges which key sealed a value")
	}
	if _, err := storage.NewSealer(k1[:16]); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
}

func TestParseSecretKey(t *testing.T) {
	k := storage.NewSecretKey()
	for _, s := range []string{storage.EncodeSecretKey(k), " " + storage.EncodeSecretKey(k) + "\n", strings.TrimRight(storage.EncodeSecretKey(k), "=")} {
		got, err := storage.ParseSecretKey(s)
		if err != nil || !bytes.Equal(got, k) {
			t.Fatalf("ParseSecretKey(%q) = %v", s, err)
		}
	}
	if _, err := storage.ParseSecretKey("too short"); err == nil {
		t.Fatal("a short key was accepted")
	}
}

// TestBotConfigsSealedAtRest checks on every backend that bot configs are
// stored sealed, read back open, rotated to a new key, and that a store
// without the key refuses to hand them out.
func TestBotConfigsSealedAtRest(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		k1, k2 := storage.NewSecretKey(), storage.NewSecretKey()
		s1, _ := storage.NewSealer(k1)
		st := open(t, dsn, storage.WithSealer(s1))
		secret := "7777:AAH-very-secret-token-0123456789abcdef"
		a := push.Account{Name: "a", Status: push.AccountActive, CreatedAt: t0}
		if err := st.CreateAccount(ctx, &a); err != nil {
			t.Fatal(err)
		}
		b := push.Bot{AccountID: a.ID, Platform: "telegram", Name: "b", Config: json.RawMessage(`{"token":"` + secret + `"}`), CreatedAt: t0}
		if err := st.CreateBot(ctx, &b); err != nil {
			t.Fatal(err)
		}
		var raw string
		if err := st.DB().NewSelect().Table("bots").Column("config").Where("id = ?", b.ID).Scan(ctx, &raw); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, secret) || !strings.HasPrefix(raw, "enc:v1:") {
			t.Fatalf("stored config %q is not sealed", raw)
		}
		got, err := st.Bot(ctx, b.ID)
		if err != nil || !strings.Contains(string(got.Config), secret) {
			t.Fatalf("Bot = %s, %v", got.Config, err)
		}
		// A store without the key refuses rather than handing out ciphertext.
		bare := open(t, dsn)
		if _, err := bare.Bot(ctx, b.ID); push.KindOf(err) != push.Internal {
			t.Fatalf("Bot without the key = %v, want an internal error", err)
		}
		// Rotation: k2 primary, k1 older; everything is re-sealed with k2.
		s2, _ := storage.NewSealer(k2, k1)
		rot := open(t, dsn, storage.WithSealer(s2))
		rep, err := rot.CheckSecrets(ctx)
		if err != nil || rep.Bots != 1 || rep.ByKey[storage.KeyID(k1)] != 1 || rep.Unopened != 0 {
			t.Fatalf("CheckSecrets before rotation = %+v, %v", rep, err)
		}
		if n, err := rot.RotateSecrets(ctx); err != nil || n != 1 {
			t.Fatalf("RotateSecrets = %d, %v", n, err)
		}
		if n, _ := rot.RotateSecrets(ctx); n != 0 {
			t.Fatalf("a second rotation re-sealed %d configs", n)
		}
		only2, _ := storage.NewSealer(k2)
		after := open(t, dsn, storage.WithSealer(only2))
		if got, err := after.Bot(ctx, b.ID); err != nil || !strings.Contains(string(got.Config), secret) {
			t.Fatalf("after rotation, the new key alone: %s, %v", got.Config, err)
		}
		old, _ := storage.NewSealer(k1)
		rep, _ = open(t, dsn, storage.WithSealer(old)).CheckSecrets(ctx)
		if rep.Unopened != 1 || rep.FirstFail == nil || !strings.Contains(rep.FirstFail.Error(), storage.KeyID(k2)) {
			t.Fatalf("CheckSecrets with the old key alone = %+v", rep)
		}
	})
}

// TestSQLiteFileHoldsNoPlainSecret writes a bot through a sealing store and
// reads the database files' bytes.
func TestSQLiteFileHoldsNoPlainSecret(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	s, _ := storage.NewSealer(storage.NewSecretKey())
	st := open(t, db, storage.WithSealer(s))
	secret := "SECRET-dingtalk-0123456789"
	a := push.Account{Name: "a", Status: push.AccountActive, CreatedAt: t0}
	_ = st.CreateAccount(ctx, &a)
	b := push.Bot{AccountID: a.ID, Platform: "dingtalk", Name: "b", Config: json.RawMessage(`{"secret":"` + secret + `"}`), CreatedAt: t0}
	if err := st.CreateBot(ctx, &b); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{db, db + "-wal"} {
		data, err := os.ReadFile(f)
		if err != nil && f == db {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Fatalf("%s holds the plain secret", filepath.Base(f))
		}
	}
}
