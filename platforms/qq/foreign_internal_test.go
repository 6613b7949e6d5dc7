package qq

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// TestForeignAnswers: a body that is not the API's JSON is classified by
// its status, with QQ's own 429 wait, token refusal and hint.
func TestForeignAnswers(t *testing.T) {
	page := []byte("<html>gateway</html>")
	wait := http.Header{"Retry-After": {"7"}}
	tests := []struct {
		name    string
		resp    httpcall.Response
		want    push.SendError
		refused bool // a token refusal, for the refresh-once wrapper
	}{
		{"429 waits a second", httpcall.Response{Status: 429, Header: wait, Body: page},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: time.Second}, false},
		{"401 refuses the token", httpcall.Response{Status: 401, Body: page},
			push.SendError{Outcome: push.OutcomeRetryable, Code: "401", Message: "HTTP 401: the access token was refused"}, true},
		{"another status is a refusal naming api_base", httpcall.Response{Status: 404, Body: page},
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "404", Message: "qq answered HTTP 404 with a body that is not the QQ API's: check api_base"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(&tt.resp, scene{})
			var se *push.SendError
			if !errors.As(err, &se) {
				t.Fatalf("decode: %v, want a SendError", err)
			}
			if diff := cmp.Diff(tt.want, *se); diff != "" {
				t.Errorf("decode (-want +got):\n%s", diff)
			}
			var r *tokencache.Refused
			if errors.As(err, &r) != tt.refused {
				t.Errorf("decode: %v, token refusal %t, want %t", err, !tt.refused, tt.refused)
			}
		})
	}
}
