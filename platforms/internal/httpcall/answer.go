package httpcall

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/heraldpush/herald/push"
)

// Refused classifies an error answer that is the platform's own (its
// error text was read) by its HTTP status: 429 is Retryable after the
// Retry-After header, 5xx Uncertain (the platform may have acted on the
// request), any other status a definitive refusal, with hint, when not "",
// after msg. code is the platform's error code, or the status.
func Refused(r *Response, code, msg, hint string) *push.SendError {
	switch {
	case r.Status == http.StatusTooManyRequests:
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: code, Message: msg, RetryAfter: RetryAfter(r.Header)}
	case r.Status >= 500:
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: code, Message: msg}
	}
	if hint != "" {
		msg += ": " + hint
	}
	return push.DefinitiveError(code, "%s", msg)
}

// DecodeOwn reads r's body into v, for a platform whose every answer is a
// JSON object with a field that own reports present (its result code). A
// body that is not such an answer (a proxy's page, an empty or cut body)
// is classified by Foreign, missing saying what it lacked.
func DecodeOwn(r *Response, v any, own func() bool, missing string, o Origin) error {
	err := json.Unmarshal(r.Body, v)
	if err == nil && !own() {
		err = errors.New(missing)
	}
	if err != nil {
		return Foreign(r, err, o)
	}
	return nil
}
