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
	type req struct {
		kind  RequestKind
		dests []destination
		tt    TargetType
		m     Message
	}
	base := func() req {
		return req{RequestKindBatch, []destination{{1, 10}, {1, 11}}, "", Message{Type: MsgTypeMarkdown, Content: "hi"}}
	}
	fp := func(r req) string { return fingerprint(r.kind, r.dests, r.tt, r.m) }
	ref := fp(base())
	if again := fp(base()); again != ref {
		t.Fatalf("equal requests give different fingerprints: %s, %s", ref, again)
	}
	changes := map[string]func(r *req){
		"kind":        func(r *req) { r.kind = RequestKindMulti },
		"bot":         func(r *req) { r.dests[0].BotID = 2 },
		"target":      func(r *req) { r.dests[1].TargetID = 12 },
		"order":       func(r *req) { r.dests[0], r.dests[1] = r.dests[1], r.dests[0] },
		"extra":       func(r *req) { r.dests = append(r.dests, destination{1, 12}) },
		"target type": func(r *req) { r.tt = TargetUser },
		"msg type":    func(r *req) { r.m.Type = MsgTypeText },
		"content":     func(r *req) { r.m.Content = "hi!" },
		"image":       func(r *req) { r.m.ImageURL = "https://x/y.png" },
		"wakeup":      func(r *req) { r.m.Wakeup = true },
		// Length prefixes keep field boundaries: "hi"+"" differs from "h"+"i".
		"boundary": func(r *req) { r.m.Content, r.m.ImageURL = "h", "i" },
	}
	for name, change := range changes {
		r := base()
		change(&r)
		if fp(r) == ref {
			t.Errorf("changing the %s leaves the fingerprint unchanged", name)
		}
	}
}
