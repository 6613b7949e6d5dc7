package wecom

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// TestForeignAnswers: a body that is not WeCom's is classified by its
// status, with WeCom's own 429 wait and hint.
func TestForeignAnswers(t *testing.T) {
	tests := []struct {
		name string
		resp httpcall.Response
		want push.SendError
	}{
		{"a gateway's 429 waits 5 s", httpcall.Response{Status: 429, Header: http.Header{"Retry-After": {"1"}}, Body: []byte("<html>slow down</html>")},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: 5 * time.Second}},
		{"JSON without errcode is not WeCom's", httpcall.Response{Status: 404, Body: []byte(`{"error":"not found"}`)},
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "404", Message: "wecom answered HTTP 404 with a body that is not WeCom's: check api_base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(&tt.resp)
			var se *push.SendError
			if !errors.As(err, &se) {
				t.Fatalf("read: %v, want a SendError", err)
			}
			if diff := cmp.Diff(tt.want, *se); diff != "" {
				t.Errorf("read (-want +got):\n%s", diff)
			}
		})
	}
}
