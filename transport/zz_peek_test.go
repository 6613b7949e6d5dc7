package transport_test

import (
	"os"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

func TestZZPeek(t *testing.T) {
	h := testkit.New(t)
	r := h.CallRoot("GET", "/api/docs")
	os.WriteFile("/tmp/docs.html", r.Body, 0o644)
	r = h.CallRoot("GET", "/api/openapi.json")
	os.WriteFile("/tmp/openapi.json", r.Body, 0o644)
	r = h.CallRoot("GET", "/metrics")
	os.WriteFile("/tmp/metrics.txt", r.Body, 0o644)
	t.Log(r.Header)
}
