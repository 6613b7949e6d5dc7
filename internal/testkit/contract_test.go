package testkit_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// TestContractUnroutedStatuses: a request no documented operation takes
// may be answered 404 (unknown path) or 405 (wrong method), and 401 only
// under /api/openapi/, where the key is checked before the method.
func TestContractUnroutedStatuses(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.SQLite))
	c := h.Contract(t)
	header := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"r1"}}
	tests := []struct {
		name, method, path string
		status             int
		reason             string
		ok                 bool
	}{
		{"a wrong method under /api/openapi/ answered 401", "GET", "/api/openapi/batch-send", 401, "missing_api_key", true},
		{"a wrong method under /api/openapi/ answered 405", "GET", "/api/openapi/batch-send", 405, "method_not_allowed", true},
		{"a wrong method on a probe answered 405", "POST", "/healthz", 405, "method_not_allowed", true},
		{"a wrong method on a probe answered 401", "POST", "/healthz", 401, "missing_api_key", false},
		{"a wrong method on the document answered 401", "POST", "/api/openapi.json", 401, "missing_api_key", false},
		{"an unknown path answered 401", "GET", "/api/openapi/nowhere", 401, "missing_api_key", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, h.Root+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf(`{"code":%d,"message":"x","error":%q}`, tt.status, tt.reason)
			err = c.Check(req, tt.status, header, []byte(body))
			if (err == nil) != tt.ok {
				t.Fatalf("check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
