package client

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Error is a refusal or a failure the server answered: an HTTP status of
// 400 or more with Herald's error body {"code", "message", "error"}. A
// refusal (a 4xx) changed nothing on the server: nothing was charged,
// queued or sent.
//
// Match it by its reason with errors.Is:
//
//	if errors.Is(err, client.ReasonInsufficientPoints) { … }
//
// or read it with errors.As to get the status and the server's message.
type Error struct {
	// Status is the HTTP status of the answer.
	Status int
	// Reason is the API's stable snake_case reason ("insufficient_points",
	// "idempotency_conflict", …); for an answer without Herald's error
	// body (a proxy's), it is empty.
	Reason Reason
	// Message says what is wrong and what to do, in the server's words.
	Message string
	// RetryAfter is the wait the server asked for (Retry-After) on a 429
	// or a 503; zero when it named none.
	RetryAfter time.Duration
	// RequestID is the server's X-Request-Id of the answer, for its logs.
	RequestID string
}

// Error implements the error interface.
func (e *Error) Error() string {
	reason := string(e.Reason)
	if reason == "" {
		reason = http.StatusText(e.Status)
	}
	if e.Message == "" {
		return fmt.Sprintf("herald: %d %s", e.Status, reason)
	}
	return fmt.Sprintf("herald: %d %s: %s", e.Status, reason, e.Message)
}

// Is reports whether target is the error's Reason, so that errors.Is(err,
// client.ReasonBacklogFull) matches any error whose chain holds an *Error
// with that reason.
func (e *Error) Is(target error) bool {
	r, ok := target.(Reason)
	return ok && r != "" && r == e.Reason
}

// Refused reports whether the server refused the request (a 4xx): it
// changed nothing, and the same request would be refused again unless
// something changes first (a 429 excepted: it is refused for now).
func (e *Error) Refused() bool { return e.Status >= 400 && e.Status < 500 }

// ReasonOf returns the reason of the first *Error in err's chain, or ""
// when there is none.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// ErrUnknownResult is matched (errors.Is) by the error of a send whose
// request may have reached the server while no answer was read: the
// connection broke after the request was written, the context ended
// while waiting, or the server answered an internal error. The message
// may have been accepted, and even delivered. Never send it again under a
// new Idempotency-Key: ask what happened with Client.Recover and the key
// the error carries (see UnknownResultError), or resubmit the very same
// request with the same key, which the server answers from its record
// without sending twice.
var ErrUnknownResult = errors.New("herald: the result of the request is unknown")

// ErrNotSent is what Client.Recover returns when the server has no send
// made under the key: the request never arrived (or its record expired
// after 30 days). The original request may be sent again with the
// original key.
var ErrNotSent = errors.New("herald: no send was made with this Idempotency-Key")

// UnknownResultError is the error of a send whose result is unknown (see
// ErrUnknownResult). Key is the Idempotency-Key the request was made
// under: recover with it, never send under a new one.
type UnknownResultError struct {
	// Key is the Idempotency-Key the request was sent with.
	Key string
	// Err is what went wrong: a transport error, the context's error, or
	// the server's *Error (a 500 "internal" or a 5xx from a proxy).
	Err error
}

// Error implements the error interface.
func (e *UnknownResultError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("herald: the result of the request is unknown (it may have been carried out; look before making it again): %v", e.Err)
	}
	return fmt.Sprintf("herald: the result of the send with Idempotency-Key %q is unknown (recover it by this key; do not send it under a new one): %v", e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *UnknownResultError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnknownResult.
func (e *UnknownResultError) Is(target error) bool { return target == ErrUnknownResult }

// KeyOf returns the Idempotency-Key an error of a send carries (an
// UnknownResultError's), or "".
func KeyOf(err error) string {
	var u *UnknownResultError
	if errors.As(err, &u) {
		return u.Key
	}
	return ""
}
