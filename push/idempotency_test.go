package push

import (
	"strings"
	"testing"
)

func TestValidateIdempotencyKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"order-42:retry_1", true},
		{strings.Repeat("x", 100), true},
		{"", false},
		{strings.Repeat("x", 101), false},
		{"has space", false},
		{"slash/", false},
		{"dot.", false},
		{"ünïcode", false},
		{"tab\t", false},
	}
	for _, tt := range tests {
		err := ValidateIdempotencyKey(tt.key)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateIdempotencyKey(%q) = %v, want ok=%v", tt.key, err, tt.ok)
		}
		if err != nil && (KindOf(err) != Invalid || ReasonOf(err) != "invalid_idempotency_key") {
			t.Errorf("ValidateIdempotencyKey(%q) = %v (kind %s, reason %s), want Invalid invalid_idempotency_key", tt.key, err, KindOf(err), ReasonOf(err))
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := func() (RequestKind, []destination, TargetType, Message) {
		return KindBatch, []destination{{1, 10}, {1, 11}}, "", Message{Type: Markdown, Content: "hi", ImageURL: "", Wakeup: false}
	}
	k, d, tt, m := base()
	ref := fingerprint(k, d, tt, m)
	if again := fingerprint(base()); again != ref {
		t.Fatalf("equal requests give different fingerprints: %s, %s", ref, again)
	}
	changes := map[string]func() string{
		"kind":   func() string { k, d, tt, m := base(); k = KindMulti; return fingerprint(k, d, tt, m) },
		"bot":    func() string { k, d, tt, m := base(); d[0].BotID = 2; return fingerprint(k, d, tt, m) },
		"target": func() string { k, d, tt, m := base(); d[1].TargetID = 12; return fingerprint(k, d, tt, m) },
		"order":  func() string { k, d, tt, m := base(); d[0], d[1] = d[1], d[0]; return fingerprint(k, d, tt, m) },
		"extra": func() string {
			k, d, tt, m := base()
			d = append(d, destination{1, 12})
			return fingerprint(k, d, tt, m)
		},
		"target type": func() string { k, d, tt, m := base(); tt = TargetUser; return fingerprint(k, d, tt, m) },
		"msg type":    func() string { k, d, tt, m := base(); m.Type = Text; return fingerprint(k, d, tt, m) },
		"content":     func() string { k, d, tt, m := base(); m.Content = "hi!"; return fingerprint(k, d, tt, m) },
		"image":       func() string { k, d, tt, m := base(); m.ImageURL = "https://x/y.png"; return fingerprint(k, d, tt, m) },
		"wakeup":      func() string { k, d, tt, m := base(); m.Wakeup = true; return fingerprint(k, d, tt, m) },
		// Length prefixes keep field boundaries: "hi"+"" differs from "h"+"i".
		"boundary": func() string {
			k, d, tt, m := base()
			m.Content, m.ImageURL = "h", "i"
			return fingerprint(k, d, tt, m)
		},
	}
	for name, f := range changes {
		if got := f(); got == ref {
			t.Errorf("changing the %s leaves the fingerprint unchanged", name)
		}
	}
}
