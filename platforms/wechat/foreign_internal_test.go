package wechat

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// TestForeignAnswers: a body that is not WeChat's is classified by its
// status, with WeChat's own 429 wait and hint.
func TestForeignAnswers(t *testing.T) {
	page := []byte("<html>proxy</html>")
	tests := []struct {
		name string
		resp httpcall.Response
		want push.SendError
	}{
		{"429 waits a second", httpcall.Response{Status: 429, Header: http.Header{"Retry-After": {"7"}}, Body: page},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: time.Second}},
		{"another status is a refusal naming api_base", httpcall.Response{Status: 403, Body: page},
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "403", Message: "wechat answered HTTP 403 with a body that is not WeChat's: check api_base"}},
		{"JSON without errcode on a 429 waits a second", httpcall.Response{Status: 429, Body: []byte(`{"message":"slow down"}`)},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: time.Second}},
		{"JSON without errcode on a 5xx may have been sent", httpcall.Response{Status: 503, Body: []byte(`{}`)},
			push.SendError{Outcome: push.OutcomeUncertain, Message: "HTTP 503 from the platform or a gateway in front of it"}},
		{"JSON without errcode on a 4xx is a refusal naming api_base", httpcall.Response{Status: 404, Body: []byte(`{"error":"no route"}`)},
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "404", Message: "wechat answered HTTP 404 with a body that is not WeChat's: check api_base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(&tt.resp, time.Now())
			var se *push.SendError
			if !errors.As(err, &se) {
				t.Fatalf("decode: %v, want a SendError", err)
			}
			if diff := cmp.Diff(tt.want, *se); diff != "" {
				t.Errorf("decode (-want +got):\n%s", diff)
			}
		})
	}
}
