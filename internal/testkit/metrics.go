package testkit

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Scrape reads the server's /metrics into series name{labels} → value,
// Herald's own series only (those named herald_…).
func (h *Herald) Scrape(tb testing.TB) map[string]float64 {
	tb.Helper()
	r := h.CallRoot(tb, "GET", "/metrics")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		tb.Fatalf("testkit: GET /metrics: %d %v\n%s", r.Status, r.Header, r.Body)
	}
	out := make(map[string]float64)
	for _, line := range strings.Split(string(r.Body), "\n") {
		if !strings.HasPrefix(line, "herald_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.Fatalf("testkit: metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}
