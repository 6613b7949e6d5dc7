package feishu

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// TestForeignAnswers: a body that is not Feishu's is classified by its
// status, with the wait of x-ogw-ratelimit-reset and Feishu's hint.
func TestForeignAnswers(t *testing.T) {
	page := []byte("<html>rate limited</html>")
	tests := []struct {
		name string
		resp httpcall.Response
		want push.SendError
	}{
		{"429 waits x-ogw-ratelimit-reset", httpcall.Response{Status: 429, Header: http.Header{"X-Ogw-Ratelimit-Reset": {"3"}, "Retry-After": {"7"}}, Body: page},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: 3 * time.Second}},
		{"429 without it waits a second", httpcall.Response{Status: 429, Body: page},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: time.Second}},
		{"JSON without code is not Feishu's", httpcall.Response{Status: 404, Body: []byte(`{"msg":"not found"}`)},
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "404", Message: "feishu answered HTTP 404 with a body that is not Feishu's: check api_base"}},
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
