package httpcall

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/push"
)

func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		resp Response
		hint string
		want push.SendError
	}{
		{"429 waits for Retry-After", Response{Status: 429, Header: http.Header{"Retry-After": {"3"}}}, "a hint",
			push.SendError{Outcome: push.OutcomeRetryable, Code: "c", Message: "msg", RetryAfter: 3 * time.Second}},
		{"5xx is uncertain", Response{Status: 500}, "a hint",
			push.SendError{Outcome: push.OutcomeUncertain, Code: "c", Message: "msg"}},
		{"another status is a refusal with the hint", Response{Status: 403}, "a hint",
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "c", Message: "msg: a hint"}},
		{"a refusal without a hint", Response{Status: 400}, "",
			push.SendError{Outcome: push.OutcomeDefinitive, Code: "c", Message: "msg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, *Refused(&tt.resp, "c", "msg", tt.hint)); diff != "" {
				t.Errorf("Refused (-want +got):\n%s", diff)
			}
		})
	}
}
