package botconfig

import "testing"

func TestPrintable(t *testing.T) {
	for s, want := range map[string]bool{
		"":               true,
		"tk_AbC0.-_~!":   true,
		"has space":      false,
		"tab\there":      false,
		"nl\n":           false,
		"del\x7f":        false,
		"unicodé":        false,
		"AbCdEf0123456/": true,
	} {
		if got := Printable(s); got != want {
			t.Errorf("Printable(%q) = %v, want %v", s, got, want)
		}
	}
}
