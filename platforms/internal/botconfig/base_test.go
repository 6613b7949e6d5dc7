package botconfig

import "testing"

func TestBaseOr(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"", "https://default.example.com"},
		{"https://proxy.example.com", "https://proxy.example.com"},
		{"https://proxy.example.com/api//", "https://proxy.example.com/api"},
	} {
		if got := BaseOr(tt.value, "https://default.example.com"); got != tt.want {
			t.Errorf("BaseOr(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}
