package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// TestServeConsoleFlag: herald serve serves the console at / beside the
// API; --console=false serves the API alone.
func TestServeConsoleFlag(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		body   string
	}{
		{"on by default", nil, http.StatusOK, "<form method=\"post\" action=\"/signin\""},
		{"off", []string{"--console=false"}, http.StatusNotFound, "route_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testkit.StartServe(t, heraldBin, []string{"HERALD_DB=" + filepath.Join(t.TempDir(), "h.db")}, tc.args...)
			resp, err := http.Get(strings.TrimSuffix(p.URL, "/api") + "/signin")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
				t.Fatalf("GET /signin: %d\n%s", resp.StatusCode, body)
			}
			if r := p.CallRoot(t, "GET", "/healthz"); r.Status != http.StatusOK {
				t.Fatalf("/healthz: %d", r.Status)
			}
		})
	}
}
