package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// The management API: everything an account owns, and for operators the
// service, as JSON under /api/manage/v1. A request is made by a signed-in
// person (the session cookie the sign-in set) or by a program (an API key,
// as on the send API); the engine decides what each may see and change.

// managePrefix is where the management API lives.
const managePrefix = BasePath + "/manage/v1"

// SessionCookie is the name of the cookie that holds a session's token.
const SessionCookie = "herald_session"

// authBy says, in a request's info, what authenticated it: an API key or a
// session cookie.
type authBy uint8

const (
	byNone authBy = iota
	byKey
	bySession
)

// authenticateAny admits a request of the management API made with an API
// key (as authenticate does) or with a session cookie. A cookie-made
// request that changes anything must come from this server's own pages:
// a cross-site one is refused (Go's CrossOriginProtection).
func (s *Server) authenticateAny(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	withKey := s.authenticate(next)
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		if req.Header.Get("Authorization") != "" || req.Header.Get("X-Service-OpenAPI-Key") != "" {
			infoOf(req.Context()).by = byKey
			return withKey(w, req)
		}
		c, err := req.Cookie(SessionCookie)
		if err != nil || c.Value == "" {
			return &httpError{http.StatusUnauthorized, "not_signed_in", "you are not signed in: sign in (POST /api/manage/v1/sessions), or send an API key in \"Authorization: Bearer <API key>\""}
		}
		if err := s.crossOrigin.Check(req.Request); err != nil {
			return &httpError{http.StatusForbidden, "cross_origin", "this request came from another site: it was refused to protect your session; use the console's own pages, or an API key"}
		}
		ctx := req.Context()
		p, err := s.eng.Sessions().Authenticate(ctx, c.Value)
		if err != nil {
			if push.KindOf(err) == push.Unauthenticated {
				clearSessionCookie(w, s.secureCookie(req.Request))
			}
			return err
		}
		p.Address = clientAddress(req.Request)
		ri := infoOf(ctx)
		ri.principal, ri.authed, ri.by = p, true, bySession
		d, err := s.eng.Keys().Admit(ctx, p)
		setRateHeaders(w, d)
		if err != nil {
			return err
		}
		return next(w, req)
	}
}

// crossOriginOnly refuses a cross-site request to a route that needs no
// sign-in but acts for a browser (signing in, signing up): a page of
// another site must not sign a visitor in to an account of its choosing.
func (s *Server) crossOriginOnly(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		if err := s.crossOrigin.Check(req.Request); err != nil {
			return &httpError{http.StatusForbidden, "cross_origin", "this request came from another site: it was refused; sign in on this server's own pages"}
		}
		return next(w, req)
	}
}

// principal returns the request's principal with its address.
func principal(req bunrouter.Request) push.Principal {
	p := principalOf(req.Context())
	p.Address = clientAddress(req.Request)
	return p
}

// clientAddress is the request's remote IP address.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// secureCookie says whether the session cookie is Secure: on TLS, or when
// the server's public URL is https (behind a TLS-terminating proxy).
func (s *Server) secureCookie(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.publicURL, "https://")
}

// setSessionCookie sets the session's cookie: HttpOnly, SameSite=Lax, for
// the session's whole life.
func setSessionCookie(w http.ResponseWriter, token string, expires time.Time, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure})
}

// clearSessionCookie makes the browser forget the session's cookie.
func clearSessionCookie(w http.ResponseWriter, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure})
}

// decodeStrict reads a management request's JSON object into v. Unlike
// the send API's bodies it refuses fields it does not know, naming them.
func (s *Server) decodeStrict(w http.ResponseWriter, req bunrouter.Request, v any) error {
	data, err := io.ReadAll(&depthReader{r: http.MaxBytesReader(w, req.Body, s.maxBody), max: maxDepth})
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &httpError{http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is larger than %d bytes", s.maxBody)}
		}
		if errors.Is(err, errTooDeep) {
			return push.Errorf(push.Invalid, "invalid_json", "the request body nests objects or arrays more than %d levels deep: send the documented shape", maxDepth)
		}
		return push.Errorf(push.Invalid, "unreadable_body", "the request body could not be read: %v", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return push.Errorf(push.Invalid, "empty_body", "the request body is empty: send a JSON object")
	}
	if trimmed[0] != '{' {
		return push.Errorf(push.Invalid, "invalid_json", "the request body must be a JSON object ({…})")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return push.Errorf(push.Invalid, "unknown_field", "the field %s is not known here: see the API documentation for this request's fields", name)
		}
		return push.Errorf(push.Invalid, "invalid_json", "%s", describeDecodeError(err, reflect.TypeOf(v)))
	}
	if _, err := dec.Token(); err != io.EOF {
		return push.Errorf(push.Invalid, "invalid_json", "the request body has data after the JSON object: send one JSON object")
	}
	return nil
}

// pathID reads a route's integer id parameter.
func pathID(req bunrouter.Request, what string) (int64, error) {
	raw := req.Param("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, push.Errorf(push.Invalid, "invalid_id", "%q is not a %s id: give the positive number of one", truncate(raw, 40), what)
	}
	return id, nil
}

// listParams reads a list's limit and cursor from the query.
func listParams(req bunrouter.Request) (int, string, error) {
	q := req.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", push.Errorf(push.Invalid, "invalid_limit", "limit %q is not a number: give 1 to %d", truncate(v, 20), push.MaxPageSize)
		}
		limit = n
	}
	return limit, q.Get("cursor"), nil
}

// queryID reads an optional integer id from the query (0 when absent).
func queryID(req bunrouter.Request, name string) (int64, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, push.Errorf(push.Invalid, "invalid_"+name, "%s %q is not an id: give a positive number", name, truncate(v, 40))
	}
	return id, nil
}

// queryTime reads an optional RFC 3339 time from the query.
func queryTime(req bunrouter.Request, name string) (time.Time, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, push.Errorf(push.Invalid, "invalid_"+name, "%s %q is not a time: give one in RFC 3339, such as 2026-11-24T09:30:00Z", name, truncate(v, 40))
	}
	return t, nil
}

// listView is a page of a list as the management API answers it.
type listView[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next"`
}

// pageView converts a page of the engine's.
func pageView[T, V any](p push.Page[T], conv func(T) V) listView[V] {
	out := listView[V]{Items: make([]V, len(p.Items)), Next: p.Next}
	for i, x := range p.Items {
		out.Items[i] = conv(x)
	}
	return out
}

// writePage answers a list: the page in its views, or err when the list
// failed.
func writePage[T, V any](w http.ResponseWriter, p push.Page[T], err error, conv func(T) V) error {
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", pageView(p, conv))
	return nil
}

// accountParam is an account named by the query (?account=) or by the
// principal: a member's own account by default.
func accountParam(req bunrouter.Request) (int64, error) {
	id, err := queryID(req, "account")
	if err != nil || id != 0 {
		return id, err
	}
	return principalOf(req.Context()).AccountID, nil
}

// ttlUntil turns a requested expiry into a lifetime: zero for none, else
// the time from now, which must be in the future.
func ttlUntil(expires *time.Time, now time.Time, what string) (time.Duration, error) {
	if expires == nil || expires.IsZero() {
		return 0, nil
	}
	d := expires.Sub(now)
	if d <= 0 {
		return 0, push.Errorf(push.Invalid, "invalid_expiry", "expiresAt %s is in the past: give a time to come for the %s to expire", expires.UTC().Format(time.RFC3339), what)
	}
	return d, nil
}
