package httpcall

import (
	"errors"
	"net/http"
	"strings"
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

func TestDecodeOwn(t *testing.T) {
	type answer struct {
		Code *int   `json:"code"`
		Msg  string `json:"msg"`
	}
	tests := []struct {
		name   string
		resp   Response
		read   bool // the answer is the platform's: no error
		want   push.Outcome
		errHas string
	}{
		{"the platform's answer is read", Response{Status: 200, Body: []byte(`{"code":903,"msg":"no"}`)}, true, 0, ""},
		{"a 2xx without the code is unreadable", Response{Status: 200, Body: []byte(`{"msg":"ok"}`)}, false, push.OutcomeUncertain, "could not be read: no code in the answer"},
		{"a 2xx that is not JSON is unreadable", Response{Status: 200, Body: []byte(`ok`)}, false, push.OutcomeUncertain, "could not be read: invalid character"},
		{"a proxy's page is a refusal", Response{Status: 403, Body: []byte(`<html>`)}, false, push.OutcomeDefinitive, "pushplus answered HTTP 403 with a body that is not PushPlus's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ans answer
			err := DecodeOwn(&tt.resp, &ans, func() bool { return ans.Code != nil }, "no code in the answer", Origin{Platform: "pushplus", Name: "PushPlus"})
			if tt.read {
				if err != nil || ans.Code == nil || *ans.Code != 903 || ans.Msg != "no" {
					t.Fatalf("DecodeOwn: %v, answer %+v", err, ans)
				}
				return
			}
			var se *push.SendError
			if !errors.As(err, &se) || se.Outcome != tt.want || !strings.Contains(se.Message, tt.errHas) {
				t.Fatalf("DecodeOwn: %v, want %s with %q", err, tt.want, tt.errHas)
			}
		})
	}
}
