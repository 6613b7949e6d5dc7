package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

type ctxKey int

const requestInfoKey ctxKey = iota

// requestInfo collects what the request log line reports; handlers and
// middlewares deeper in the chain fill it in.
type requestInfo struct {
	principal push.Principal
	authed    bool
	jobIDs    []string
	reason    string // why the request was refused or failed
	replayed  bool   // answered from an Idempotency-Key record
	// words names the engine's inputs as the route's request does, for
	// the wording of its refusals.
	words endpoint
	by    authBy
	// route names the route of a request the router does not match (the
	// console's pages), for the log line and the metrics.
	route string
}

func infoOf(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(requestInfoKey).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

func principalOf(ctx context.Context) push.Principal { return infoOf(ctx).principal }

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// logRequests writes one log line per request and echoes (or makes) the
// request id in X-Request-Id. Keys and credentials are never logged. The
// line's level follows the status: error for 5xx, warn for 4xx, info
// otherwise, and debug for the probes, documents and metrics when they
// answer 2xx. The observer, when set, hears of every request.
func (s *Server) logRequests(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		start := time.Now()
		rid := req.Header.Get("X-Request-Id")
		if rid == "" || len(rid) > 128 || strings.ContainsAny(rid, "\r\n") {
			var b [8]byte
			_, _ = rand.Read(b[:])
			rid = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", rid)
		ri := &requestInfo{}
		req = req.WithContext(context.WithValue(req.Context(), requestInfoKey, ri))
		sw := &statusWriter{ResponseWriter: w}
		err := next(sw, req)
		took := time.Since(start)
		status := sw.status
		switch {
		case status != 0:
		case ri.reason == "client_gone":
			status = 499 // the client went away before an answer was written
		default:
			status = http.StatusOK // what net/http sends for an empty answer
		}
		route := req.Route()
		if route == "" {
			route = ri.route
		}
		if s.obs != nil {
			s.obs.HTTPRequest(req.Method, route, status, took)
		}
		level := requestLevel(route, status)
		if !s.log.Enabled(req.Context(), level) {
			return err // e.g. a probe's debug line on a server that logs info
		}
		attrs := []slog.Attr{
			slog.String("method", req.Method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Duration("duration", took.Round(time.Microsecond)),
			slog.String("request_id", rid),
		}
		if ri.authed {
			attrs = append(attrs, slog.Int64("account", ri.principal.AccountID))
		}
		if len(ri.jobIDs) > 0 {
			attrs = append(attrs, slog.String("jobs", strings.Join(ri.jobIDs, ",")))
		}
		if ri.replayed {
			attrs = append(attrs, slog.Bool("replay", true))
		}
		if ri.reason != "" {
			attrs = append(attrs, slog.String("reason", ri.reason))
		}
		s.log.LogAttrs(req.Context(), level, "request", attrs...)
		return err
	}
}

// requestLevel is the level of a request's log line.
func requestLevel(route string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	case !strings.HasPrefix(route, apiPrefix+"/"):
		return slog.LevelDebug // probes, documents, metrics
	}
	return slog.LevelInfo
}

// apiKeyOf reads the API key from "Authorization: Bearer <key>" or, for
// older clients, "X-Service-OpenAPI-Key: <key>". An Authorization header
// that is not "Bearer <key>" is refused: it is not read as no key.
func apiKeyOf(r *http.Request) (string, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, key, ok := strings.Cut(h, " ")
		if key = strings.TrimSpace(key); !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
			return "", push.Errorf(push.Unauthenticated, "invalid_authorization", "the Authorization header must be \"Bearer <API key>\"")
		}
		return key, nil
	}
	return strings.TrimSpace(r.Header.Get("X-Service-OpenAPI-Key")), nil
}

// authenticate admits requests with a valid key within the key's rate
// limit, and reports the limit in RateLimit-* headers.
func (s *Server) authenticate(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		ctx := req.Context()
		key, err := apiKeyOf(req.Request)
		if err != nil {
			return err
		}
		if key == "" {
			return &httpError{http.StatusUnauthorized, "missing_api_key", "no API key was sent: send the header \"Authorization: Bearer <API key>\" (or \"X-Service-OpenAPI-Key: <API key>\")"}
		}
		p, err := s.eng.Keys().Authenticate(ctx, key)
		if err != nil {
			return err
		}
		ri := infoOf(ctx)
		ri.principal, ri.authed = p, true
		d, err := s.eng.Keys().Admit(ctx, p)
		setRateHeaders(w, d)
		if err != nil {
			return err
		}
		return next(w, req)
	}
}

// setRateHeaders reports the rate limit of an admitted request's key or
// user in RateLimit-* headers.
func setRateHeaders(w http.ResponseWriter, d push.RateDecision) {
	if d.Limit > 0 {
		h := w.Header()
		h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
		h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
		h.Set("RateLimit-Reset", strconv.Itoa(int((d.ResetAfter+time.Second-1)/time.Second)))
	}
}
