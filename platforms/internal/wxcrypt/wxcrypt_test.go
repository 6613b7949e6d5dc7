package wxcrypt

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

const testKey = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"

func mustKey(t testing.TB) []byte {
	t.Helper()
	k, err := Key(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignature: the documented example of WeChat's signature (token,
// timestamp, nonce sorted and joined, SHA-1) and its verification.
func TestSignature(t *testing.T) {
	sig := Signature("token", "1409304348", "xxxxxx")
	if !Verify(sig, "xxxxxx", "token", "1409304348") || !Verify(strings.ToUpper(sig), "token", "1409304348", "xxxxxx") {
		t.Fatal("a signature does not verify")
	}
	for _, bad := range []string{"", sig[:39], sig + "0", strings.Repeat("0", 40)} {
		if Verify(bad, "token", "1409304348", "xxxxxx") {
			t.Errorf("%q verified", bad)
		}
	}
	if Verify(sig, "token2", "1409304348", "xxxxxx") {
		t.Error("a signature verified with another token")
	}
}

func TestFresh(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		ts   string
		want bool
	}{
		{"1700000000", true},
		{"1699999701", true},
		{"1699999600", false},
		{"1700000400", false},
		{"", false},
		{"17e8", false},
		{"-1", false},
		{"99999999999999999999", false},
	}
	for _, tc := range tests {
		if got := Fresh(tc.ts, now); got != tc.want {
			t.Errorf("Fresh(%q) = %v, want %v", tc.ts, got, tc.want)
		}
	}
}

// TestRoundTrip: Encrypt and Decrypt agree, for the receiver only; the
// padding is to 32 bytes.
func TestRoundTrip(t *testing.T) {
	k := mustKey(t)
	for _, n := range []int{0, 1, 11, 12, 31, 32, 100, 1000} {
		msg := bytes.Repeat([]byte("x"), n)
		enc, err := Encrypt(k, msg, "wx0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(enc)
		if len(raw)%32 != 0 {
			t.Errorf("%d bytes: ciphertext of %d bytes, not padded to 32", n, len(raw))
		}
		got, err := Decrypt(k, enc, "wx0123456789abcdef")
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("%d bytes: %q, %v", n, got, err)
		}
		if _, err := Decrypt(k, enc, "wx0000000000000000"); err != ErrReceiveID {
			t.Errorf("decrypted for another app: %v", err)
		}
	}
}

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{testKey, true},
		{testKey[:42], false},
		{testKey + "A", false},
		{testKey[:42] + "+", false},
		{"", false},
	} {
		if got := ValidKey(tc.key); got != tc.want {
			t.Errorf("ValidKey(%q) = %v", tc.key, got)
		}
	}
}

// FuzzVerify: the signature check never panics and accepts only the
// signature of the parts.
func FuzzVerify(f *testing.F) {
	f.Add("token", "1409304348", "xxxxxx", "enc", Signature("token", "1409304348", "xxxxxx", "enc"))
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, token, ts, nonce, enc, sig string) {
		if Verify(sig, token, ts, nonce, enc) && !strings.EqualFold(sig, Signature(token, ts, nonce, enc)) {
			t.Fatalf("verified a signature that is not the parts'")
		}
		_ = Fresh(ts, time.Now())
	})
}

// FuzzDecrypt: the decoder of ciphertexts and of the XML they hold never
// panics, and a message it returns is shorter than its ciphertext.
func FuzzDecrypt(f *testing.F) {
	k := mustKey(f)
	enc, _ := Encrypt(k, []byte("<xml><FromUserName>u</FromUserName></xml>"), "wxid")
	f.Add(enc, "wxid", []byte("<xml><Encrypt><![CDATA["+enc+"]]></Encrypt></xml>"))
	f.Add("", "", []byte(""))
	f.Add("AAAA", "x", []byte("<xml><xml><xml>"))
	f.Add(strings.Repeat("A", 64), "", []byte("<!DOCTYPE x [<!ENTITY a 'b'>]><xml>&a;</xml>"))
	f.Fuzz(func(t *testing.T, b64, id string, body []byte) {
		if msg, err := Decrypt(k, b64, id); err == nil {
			if len(msg) >= len(b64) {
				t.Fatalf("a message of %d bytes out of %d bytes of base64", len(msg), len(b64))
			}
			_, _ = Parse(msg)
		}
		m, err := Parse(body)
		if err == nil && m.Encrypt != "" {
			_, _ = Decrypt(k, m.Encrypt, id)
		}
	})
}
