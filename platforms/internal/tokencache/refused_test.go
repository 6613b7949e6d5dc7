package tokencache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/push"
)

func TestDoRefreshing(t *testing.T) {
	refusal := &Refused{Err: &push.SendError{Outcome: push.OutcomeRetryable, Code: "40001", Message: "invalid credential"}}
	busy := &push.SendError{Outcome: push.OutcomeRetryable, Code: "-1", Message: "busy"}
	tests := []struct {
		name    string
		answers []error // what the platform answers each call, in order
		ok      bool
		want    push.Outcome
		errHas  string
		seen    []string // the tokens the calls used
	}{
		{"accepted", []error{nil}, true, 0, "", []string{"t1"}},
		{"refused once: a new token, and the call again", []error{refusal, nil}, true, 0, "", []string{"t1", "t2"}},
		{"a fresh token refused again is definitive", []error{refusal, refusal}, false, push.OutcomeDefinitive,
			"invalid credential: check the token host (code 40001)", []string{"t1", "t2"}},
		{"another failure is not tried again", []error{busy}, false, push.OutcomeRetryable, "busy", []string{"t1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{})
			n := 0
			fetch := func(context.Context) (Token, error) {
				n++
				return Token{Value: fmt.Sprintf("t%d", n), ExpiresAt: time.Now().Add(time.Hour)}, nil
			}
			var seen []string
			call := func(_ context.Context, tok string) (string, error) {
				err := tt.answers[len(seen)]
				seen = append(seen, tok)
				return "sent with " + tok, err
			}
			v, err := DoRefreshing(context.Background(), c, "k", fetch, call, "check the token host")
			if diff := cmp.Diff(tt.seen, seen); diff != "" {
				t.Errorf("tokens used (-want +got):\n%s", diff)
			}
			if tt.ok {
				if err != nil || v != "sent with "+seen[len(seen)-1] {
					t.Fatalf("got %q, %v", v, err)
				}
				return
			}
			var se *push.SendError
			if !errors.As(err, &se) || se.Outcome != tt.want || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v, want %s with %q", err, tt.want, tt.errHas)
			}
		})
	}
}
