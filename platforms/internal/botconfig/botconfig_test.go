package botconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/push"
)

func TestDecode(t *testing.T) {
	type cfg struct {
		Token string `json:"token"`
		Port  int    `json:"port"`
	}
	tests := []struct {
		raw  string
		says string // empty: valid
	}{
		{`{"token":"t","port":1}`, ""},
		{`{"token":"t","extra":1}`, `unknown field "extra"`},
		{`{"token":5}`, "field token must be a string"},
		{`{"port":"x"}`, "field port must be a int"},
		{`[1]`, "not a JSON object"},
		{`{"token":"t"} {}`, "more than one JSON value"},
		{`nope`, "not a JSON object"},
	}
	for _, tt := range tests {
		var c cfg
		err := Decode("demo", json.RawMessage(tt.raw), &c, `{"token":"…"}`)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("Decode(%s) = %v", tt.raw, err)
		case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says) || push.KindOf(err) != push.Invalid):
			t.Errorf("Decode(%s) = %v, want Invalid mentioning %q", tt.raw, err, tt.says)
		}
	}
}

func TestMalformedNeverQuotesTheValue(t *testing.T) {
	err := Malformed("demo", "secret", "give 32 hex characters")
	if !strings.Contains(err.Error(), "secret is malformed") {
		t.Fatalf("Malformed = %v", err)
	}
	for _, v := range []string{"", "https://x.example", "http://h:1/p"} {
		if err := BaseURL("demo", "api_base", v); err != nil {
			t.Errorf("BaseURL(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"ftp://x", "x.example", "https://x?token=abc", "https://x#f"} {
		err := BaseURL("demo", "api_base", v)
		if err == nil || strings.Contains(err.Error(), "abc") {
			t.Errorf("BaseURL(%q) = %v, want a refusal that does not quote it", v, err)
		}
	}
}
