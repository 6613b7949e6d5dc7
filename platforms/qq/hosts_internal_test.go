package qq

import "testing"

func TestHosts(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		api, token string
	}{
		{"defaults", Config{}, DefaultAPIBase, DefaultTokenBase},
		{"sandbox", Config{Sandbox: true}, SandboxAPIBase, DefaultTokenBase},
		{"overrides, trailing slash dropped", Config{APIBase: "https://proxy.example.com/qq/", TokenBase: "http://10.0.0.1:8080/"},
			"https://proxy.example.com/qq", "http://10.0.0.1:8080"},
	}
	for _, tc := range tests {
		if got := tc.cfg.apiBase(); got != tc.api {
			t.Errorf("%s: api base %q, want %q", tc.name, got, tc.api)
		}
		if got := tc.cfg.tokenBase(); got != tc.token {
			t.Errorf("%s: token base %q, want %q", tc.name, got, tc.token)
		}
	}
}
