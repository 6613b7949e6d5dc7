package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/transport"
)

type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

func TestHealthAndReadiness(t *testing.T) {
	redisDown := transport.ReadyCheck{Name: "redis", Check: func(context.Context) error {
		return errors.New("dial tcp 127.0.0.1:6390: connect: connection refused")
	}}
	redisUp := transport.ReadyCheck{Name: "redis", Check: func(ctx context.Context) error { return ctx.Err() }}
	tests := []struct {
		name   string
		opts   []testkit.Option
		upset  func(h *testkit.Herald)
		status int
		want   readiness
	}{
		{"ready", nil, nil, 200, readiness{"ready", map[string]string{"database": "ok"}}},
		{"ready with redis", []testkit.Option{testkit.WithReadyCheck(redisUp)}, nil, 200,
			readiness{"ready", map[string]string{"database": "ok", "redis": "ok"}}},
		{"redis down", []testkit.Option{testkit.WithReadyCheck(redisDown)}, nil, 503,
			readiness{"unavailable", map[string]string{"database": "ok", "redis": "failing"}}},
		{"draining", nil, func(h *testkit.Herald) { h.Engine.Drain() }, 503,
			readiness{"draining", map[string]string{"database": "ok"}}},
		{"database closed", []testkit.Option{testkit.WithoutStart()}, func(h *testkit.Herald) { _ = h.Store.Close() }, 503,
			readiness{"unavailable", map[string]string{"database": "failing"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := testkit.New(t, append(tt.opts, testkit.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))...)
			if tt.upset != nil {
				tt.upset(h)
			}
			if _, ok := tt.want.Checks["redis"]; !ok && h.Backend == testkit.ScaleOut {
				// The scale-out node checks its Redis itself.
				tt.want.Checks["redis"] = "ok"
			}
			r := h.CallRoot(t, "GET", "/readyz")
			var got readiness
			r.Decode(t, &got)
			if diff := cmp.Diff(tt.want, got); r.Status != tt.status || diff != "" {
				t.Fatalf("readyz %d (want %d), body (-want +got):\n%s", r.Status, tt.status, diff)
			}
			if ra := r.Header.Get("Retry-After"); (tt.status == 503) != (ra == "5") {
				t.Fatalf("Retry-After %q on %d", ra, r.Status)
			}
			if strings.Contains(string(r.Body), "refused") || strings.Contains(string(r.Body), "127.0.0.1") {
				t.Fatalf("readyz answered a dependency's error: %s", r.Body)
			}
			if got.Checks["redis"] == "failing" && !strings.Contains(logs.String(), `"check":"redis"`) {
				t.Fatalf("the failing check was not logged:\n%s", logs.String())
			}
			// The process is up whatever its dependencies say.
			hz := h.CallRoot(t, "GET", "/healthz")
			if hz.Status != 200 || string(hz.Body) != "{\"status\":\"ok\"}\n" {
				t.Fatalf("healthz: %d %s", hz.Status, hz.Body)
			}
		})
	}
}

// TestMetricsDisabled: a server built without metrics answers /metrics
// with the documented 404.
func TestMetricsDisabled(t *testing.T) {
	h := testkit.New(t)
	bare := httptest.NewServer(transport.New(h.Engine, transport.Options{}))
	defer bare.Close()
	req, err := http.NewRequest("GET", bare.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"error":"metrics_disabled"`) {
		t.Fatalf("/metrics without metrics: %d %s", resp.StatusCode, body)
	}
	if err := h.Contract(t).Check(req, resp.StatusCode, resp.Header, body); err != nil {
		t.Fatal(err)
	}
}
