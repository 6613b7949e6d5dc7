package transport_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// TestProbesAndAllow: probes and scrapers may ask with HEAD, a scraper
// that asks for OpenMetrics gets it, and every 405 says in Allow what the
// path does answer.
func TestProbesAndAllow(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	root := strings.TrimSuffix(h.URL, "/api")
	tests := []struct {
		name        string
		method      string
		path        string
		header      []string
		status      int
		contentType string // prefix
		allow       string
		bodyEnd     string
	}{
		{name: "HEAD healthz", method: "HEAD", path: "/healthz", status: 200, contentType: "application/json"},
		{name: "HEAD readyz", method: "HEAD", path: "/readyz", status: 200, contentType: "application/json"},
		{name: "HEAD metrics", method: "HEAD", path: "/metrics", status: 200, contentType: "text/plain"},
		{name: "OpenMetrics when asked for", method: "GET", path: "/metrics",
			header: []string{"Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"},
			status: 200, contentType: "application/openmetrics-text", bodyEnd: "# EOF\n"},
		{name: "text format otherwise", method: "GET", path: "/metrics", status: 200, contentType: "text/plain"},
		{name: "405 on metrics", method: "DELETE", path: "/metrics", status: 405, contentType: "application/json", allow: "GET, HEAD"},
		{name: "405 on healthz", method: "POST", path: "/healthz", status: 405, contentType: "application/json", allow: "GET, HEAD"},
		{name: "405 on a send route", method: "PUT", path: "/api/openapi/v1/push/private",
			header: []string{"Authorization", "Bearer " + f.Key}, status: 405, contentType: "application/json", allow: "POST"},
		{name: "405 on a job route", method: "POST", path: "/api/openapi/queue/1",
			header: []string{"Authorization", "Bearer " + f.Key}, status: 405, contentType: "application/json", allow: "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, root+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(tt.header); i += 2 {
				req.Header.Set(tt.header[i], tt.header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.contentType) {
				t.Fatalf("%s %s: %d %q (want %d %q)\n%s", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.contentType, body)
			}
			if got := resp.Header.Get("Allow"); got != tt.allow {
				t.Fatalf("Allow %q, want %q", got, tt.allow)
			}
			if tt.method == "HEAD" && len(body) != 0 {
				t.Fatalf("HEAD answered a body: %q", body)
			}
			if tt.status == 405 && !strings.Contains(string(body), `"error":"method_not_allowed"`) {
				t.Fatalf("405 without the error envelope: %s", body)
			}
			if !strings.HasSuffix(string(body), tt.bodyEnd) {
				t.Fatalf("body does not end with %q:\n%s", tt.bodyEnd, body)
			}
		})
	}
}
