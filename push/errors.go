package push

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an Error. Each kind maps to one HTTP status in the
// transport; nothing else in Herald knows about HTTP.
type Kind uint8

// The kinds of error the engine returns.
const (
	Other           Kind = iota // unclassified; treated as Internal
	Invalid                     // bad parameters or insufficient points (400)
	Unauthenticated             // missing or unknown API key (401)
	Forbidden                   // revoked or expired key, suspended account (403)
	NotFound                    // bot, target or job does not exist for the account (404)
	Conflict                    // idempotency conflict or a job state that has changed (409)
	TooMany                     // rate limit or backlog limit reached (429)
	PlatformFailed              // the platform refused or failed a synchronous send (500)
	Unavailable                 // the service is draining or a dependency is down (503)
	Internal                    // a bug or an unexpected storage failure (500)
)

// String returns the kind's snake_case name.
func (k Kind) String() string {
	switch k {
	case Other:
		return "other"
	case Invalid:
		return "invalid"
	case Unauthenticated:
		return "unauthenticated"
	case Forbidden:
		return "forbidden"
	case NotFound:
		return "not_found"
	case Conflict:
		return "conflict"
	case TooMany:
		return "too_many"
	case PlatformFailed:
		return "platform_failed"
	case Unavailable:
		return "unavailable"
	case Internal:
		return "internal"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Error is the one error type of the engine. Message is written for the
// caller in the engine's words: it says what is wrong and what to do, and
// names the input it is about by its Field (never by a JSON field, a
// header or a route, which are a front end's to word). Reason is a stable
// snake_case identifier such as "insufficient_points" that programs can
// match on. Field, Value and Limit are the facts behind the message, for
// front ends that word it their own way.
type Error struct {
	Kind    Kind
	Reason  string
	Message string
	// Field is the input the error is about, if one is: its name appears
	// in Message as written (e.g. "the message type 3 is not supported").
	Field Field
	// Value is the value given for Field, shortened, when it is quoted.
	Value string
	// Limit is the bound Field passed, when the error is about a limit.
	Limit      int64
	RetryAfter time.Duration // for TooMany and Unavailable: when to try again
	Err        error         // the underlying cause, if any; never shown to API callers
}

// Field names an input of the engine's verbs in Error.Field. Its value is
// the engine's word for it, as it appears in messages; a front end that
// calls the input otherwise (a JSON field, a header) replaces that word.
type Field string

// The inputs errors name.
const (
	FieldBot            Field = "bot id"
	FieldTarget         Field = "target id"
	FieldTargets        Field = "target list"
	FieldGroups         Field = "bot groups"
	FieldTargetType     Field = "target type"
	FieldMsgType        Field = "message type"
	FieldContent        Field = "content"
	FieldWakeup         Field = "wake-up mode"
	FieldImageURL       Field = "image URL"
	FieldIdempotencyKey Field = "idempotency key"
	FieldAPIKey         Field = "API key"
	FieldJob            Field = "job id"
	FieldName           Field = "name"
	FieldAddress        Field = "address"
	FieldConfig         Field = "config"
	FieldCursor         Field = "cursor"
	FieldLimit          Field = "limit"
)

// FieldOf returns the field of the first *Error in err's chain, or "".
func FieldOf(err error) Field {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// fieldErrorf builds an Invalid error about field f, with a formatted
// message that names f.
func fieldErrorf(f Field, reason, format string, args ...any) *Error {
	e := Errorf(Invalid, reason, format, args...)
	e.Field = f
	return e
}

// with sets the value given and the limit passed.
func (e *Error) with(value string, limit int64) *Error {
	e.Value, e.Limit = value, limit
	return e
}

// Error implements the error interface.
func (e *Error) Error() string {
	switch {
	case e.Message != "" && e.Err != nil:
		return e.Message + ": " + e.Err.Error()
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	default:
		return e.Kind.String()
	}
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an Error of the given kind and reason with a formatted
// message. A %w verb in the format wraps its argument as the cause.
func Errorf(kind Kind, reason, format string, args ...any) *Error {
	wrapped := fmt.Errorf(format, args...)
	e := &Error{Kind: kind, Reason: reason, Message: wrapped.Error()}
	e.Err = errors.Unwrap(wrapped)
	return e
}

// Wrap returns an Internal error that wraps err with a short description of
// the operation that failed. A nil err gives nil. An err that already is an
// *Error keeps its kind.
func Wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return &Error{Kind: Internal, Reason: "internal", Message: op, Err: err}
}

// KindOf returns the kind of the first *Error in err's chain, or Internal
// when there is none (and Other when err is nil).
func KindOf(err error) Kind {
	if err == nil {
		return Other
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Kind == Other {
			return Internal
		}
		return e.Kind
	}
	return Internal
}

// ReasonOf returns the reason of the first *Error in err's chain, or
// "internal" when there is none.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Reason != "" {
		return e.Reason
	}
	return "internal"
}

// RetryAfterOf returns the retry hint of the first *Error in err's chain.
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// IsKind reports whether err's kind is k.
func IsKind(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Reasons the store reports that the engine acts on.
const (
	// ReasonDuplicate is the reason of the Conflict a store returns when a
	// row with the same unique key already exists.
	ReasonDuplicate = "duplicate"
	// ReasonStateChanged is the reason of the Conflict returned when a job's
	// compare-and-set move finds the job in another state.
	ReasonStateChanged = "job_state_changed"
)
