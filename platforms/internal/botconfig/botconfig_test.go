package botconfig

import (
	"encoding/json"
	"errors"
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

// TestCache: a config is decoded once per raw JSON; a refused one is not
// kept, and is refused again.
func TestCache(t *testing.T) {
	var c Cache[string]
	calls := 0
	parse := func(raw json.RawMessage) (string, error) {
		calls++
		if string(raw) == `{}` {
			return "", errors.New("empty")
		}
		return string(raw), nil
	}
	tests := []struct {
		raw   string
		want  string
		err   bool
		calls int
	}{
		{`{"a":1}`, `{"a":1}`, false, 1},
		{`{"a":1}`, `{"a":1}`, false, 1},
		{`{"a":2}`, `{"a":2}`, false, 2},
		{`{}`, "", true, 3},
		{`{}`, "", true, 4},
		{`{"a":1}`, `{"a":1}`, false, 4},
	}
	for i, tt := range tests {
		got, err := c.Get(json.RawMessage(tt.raw), parse)
		if got != tt.want || (err != nil) != tt.err || calls != tt.calls {
			t.Errorf("step %d: Get(%s) = %q, %v after %d parses; want %q, error %v, %d parses", i, tt.raw, got, err, calls, tt.want, tt.err, tt.calls)
		}
	}
}
