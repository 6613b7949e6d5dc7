package tokencache

import (
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

func TestEndpoint(t *testing.T) {
	ep := Endpoint{What: "an access token", Platform: "WeCom", Field: "access_token", Check: ": check corp_id"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failures := []struct {
		name string
		in   *push.SendError
		want push.Outcome
		msg  string
	}{
		{"a refusal is definitive and says what to check", push.DefinitiveError("40013", "invalid corpid"), push.OutcomeDefinitive,
			"could not get an access token: invalid corpid: check corp_id"},
		{"a lost answer sent nothing: retryable", &push.SendError{Outcome: push.OutcomeUncertain, Message: "no answer"}, push.OutcomeRetryable,
			"getting an access token: no answer; no message was sent"},
		{"busy stays retryable", &push.SendError{Outcome: push.OutcomeRetryable, Message: "busy"}, push.OutcomeRetryable,
			"getting an access token: busy"},
	}
	for _, tt := range failures {
		se := push.AsSendError(ep.Failed(tt.in))
		if se.Outcome != tt.want || se.Message != tt.msg {
			t.Errorf("%s: %s %q, want %s %q", tt.name, se.Outcome, se.Message, tt.want, tt.msg)
		}
	}
	tokens := []struct {
		name    string
		value   string
		seconds int
		want    Token
		err     string
	}{
		{"a token and its lifetime", "tok", 600, Token{Value: "tok", ExpiresAt: now.Add(10 * time.Minute)}, ""},
		{"no lifetime: two hours", "tok", 0, Token{Value: "tok", ExpiresAt: now.Add(2 * time.Hour)}, ""},
		{"no token: retryable", "", 600, Token{}, "getting an access token: WeCom answered without access_token; nothing was sent"},
	}
	for _, tt := range tokens {
		got, err := ep.Token(now, tt.value, tt.seconds)
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: error %v", tt.name, err)
		case tt.err != "" && (err == nil || push.AsSendError(err).Outcome != push.OutcomeRetryable || push.AsSendError(err).Message != tt.err):
			t.Errorf("%s: error %v, want a retryable %q", tt.name, err, tt.err)
		}
	}
}
