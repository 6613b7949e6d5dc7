package botconfig

import "testing"

func TestRedact(t *testing.T) {
	got := Redact("failed to get [AbCdEf123] device token; token tk_secret", "AbCdEf123", "tk_secret", "", "ab")
	if want := "failed to get [[redacted]] device token; token [redacted]"; got != want {
		t.Fatalf("Redact = %q, want %q", got, want)
	}
}
