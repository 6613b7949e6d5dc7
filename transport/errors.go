package transport

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// errorBody is the body of every refusal: the HTTP status as code, a
// message saying what is wrong and what to do, and a stable reason.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Error   string `json:"error"`
	Data    any    `json:"data,omitempty"`
}

// StatusOf maps an engine error kind to its HTTP status, for the other
// HTTP fronts of the engine (the console).
func StatusOf(k push.Kind) int { return statusOf(k) }

// statusOf maps an engine error kind to its HTTP status.
func statusOf(k push.Kind) int {
	switch k {
	case push.Invalid:
		return http.StatusBadRequest
	case push.Unauthenticated:
		return http.StatusUnauthorized
	case push.Forbidden:
		return http.StatusForbidden
	case push.NotFound:
		return http.StatusNotFound
	case push.Conflict:
		return http.StatusConflict
	case push.TooMany:
		return http.StatusTooManyRequests
	case push.Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// httpError is a refusal that only the transport makes (405, 413, 415).
type httpError struct {
	status  int
	reason  string
	message string
}

func (e *httpError) Error() string { return e.message }

func errMethodNotAllowed(method, path string) error {
	return &httpError{http.StatusMethodNotAllowed, "method_not_allowed", "method " + method + " is not allowed on " + path + ": see the API documentation"}
}

// handleErrors writes the error a handler returned. Internal errors are
// logged and answered without their details.
func (s *Server) handleErrors(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		err := next(w, req)
		if err == nil {
			return nil
		}
		s.writeError(w, req.Request, err)
		return err
	}
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ri := infoOf(r.Context())
	var he *httpError
	if errors.As(err, &he) {
		ri.reason = he.reason
		writeJSON(w, he.status, errorBody{Code: he.status, Message: he.message, Error: he.reason})
		return
	}
	kind := push.KindOf(err)
	status := statusOf(kind)
	body := errorBody{Code: status, Error: push.ReasonOf(err)}
	var pe *push.Error
	switch {
	case kind == push.Internal || kind == push.Other:
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			// The client went away; nothing will read this answer.
			status = 499
		} else {
			s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		body.Code, body.Error = http.StatusInternalServerError, "internal"
		body.Message = "internal error: it was logged; retry later with the same Idempotency-Key"
	case errors.As(err, &pe):
		body.Message = ri.words.word(pe)
	default:
		body.Message = err.Error()
	}
	if kind == push.TooMany || kind == push.Unavailable {
		retry := push.RetryAfterOf(err)
		if retry <= 0 {
			retry = 5 * time.Second
		}
		w.Header().Set("Retry-After", strconv.Itoa(int((retry+time.Second-1)/time.Second)))
	}
	ri.reason = body.Error
	if status == 499 {
		ri.reason = "client_gone"
		return
	}
	writeJSON(w, status, body)
}
