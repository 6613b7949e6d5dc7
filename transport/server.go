// Package transport is Herald's HTTP front: the routes of the HTTP contract
// under /api, on bunrouter, as one client of the push engine. It is the only
// package that knows HTTP statuses.
package transport

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// BasePath is where the API lives.
const BasePath = "/api"

// DefaultMaxBody caps request bodies (1 MiB).
const DefaultMaxBody = 1 << 20

// DefaultMaxHeaderBytes caps a request's line and headers (64 KiB).
const DefaultMaxHeaderBytes = 64 << 10

// Options configure the HTTP front.
type Options struct {
	// Logger receives one line per request and internal errors.
	Logger *slog.Logger
	// MaxBody caps request bodies in bytes (default 1 MiB); a larger
	// body gets 413.
	MaxBody int64
	// MaxHeaderBytes caps a request's line and headers in bytes
	// (default 64 KiB); a larger header gets 431. The http.Server's own
	// MaxHeaderBytes (NewHTTPServer: four times the default) must be
	// larger, or net/http answers first.
	MaxHeaderBytes int
	// Observer, when set, hears of every answered request (for metrics).
	Observer RequestObserver
	// Metrics, when set, is served at GET /metrics.
	Metrics http.Handler
	// Ready are the checks of GET /readyz beyond the database, which is
	// always checked (e.g. Redis, where configured).
	Ready []ReadyCheck
	// Version is the version the OpenAPI document states (default "dev").
	Version string
	// PublicURL is where people reach this server (https://herald.example.com);
	// when it is https, the session cookie is Secure also behind a
	// TLS-terminating proxy.
	PublicURL string
	// OperationsOnly serves the probes and the metrics alone (GET and
	// HEAD /healthz, /readyz and /metrics): the front of a herald worker,
	// which takes no sends. Every other path is answered 404, and
	// Console is ignored.
	OperationsOnly bool
	// Console, when set, answers every path outside /api and the probes
	// and metrics: the web console (package transport/console). Its
	// requests are logged and measured under the pattern of the
	// http.ServeMux that matched them (http.Request.Pattern).
	Console http.Handler
}

// RequestObserver hears of every answered request. route is the route
// pattern (e.g. /api/openapi/queue/:id), empty for a path no route
// matched; it is never the raw path.
type RequestObserver interface {
	HTTPRequest(method, route string, status int, d time.Duration)
}

// Server is the HTTP front of an engine.
type Server struct {
	eng       *push.Engine
	log       *slog.Logger
	maxBody   int64
	maxHeader int
	router    *bunrouter.Router
	obs       RequestObserver
	metrics   http.Handler
	ready     []ReadyCheck
	version   string

	publicURL   string
	crossOrigin *http.CrossOriginProtection

	allow map[string][]string // route pattern → its methods, for the Allow header of a 405

	openAPIJSON []byte                // GET /api/openapi.json
	docsHTML    []byte                // GET /api/docs
	schemasHTML []byte                // GET /api/docs/schemas
	badPath     bunrouter.HandlerFunc // the logged refusal of a path with a control character
	// shapes are the fields the send requests' bodies may hold, by the
	// type of the request struct.
	shapes  map[reflect.Type]*shape
	console bunrouter.HandlerFunc // the logged web console; nil without one
}

// New returns the HTTP front of eng.
func New(eng *push.Engine, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{eng: eng, log: opts.Logger, maxBody: opts.MaxBody, maxHeader: opts.MaxHeaderBytes, obs: opts.Observer, metrics: opts.Metrics, version: opts.Version,
		publicURL: opts.PublicURL, crossOrigin: http.NewCrossOriginProtection()}
	s.shapes = make(map[reflect.Type]*shape)
	for _, v := range []any{&privateRequest{}, &compatRequest{}, &batchRequest{}, &multiRequest{}} {
		s.shapes[reflect.TypeOf(v)] = newShape(v)
	}
	s.ready = append([]ReadyCheck{{Name: "database", Check: eng.Ping}}, opts.Ready...)
	notFound := "see the API documentation"
	if opts.OperationsOnly {
		notFound = "this process takes no sends: it answers /healthz, /readyz and /metrics alone"
		opts.Console = nil
	}
	s.router = bunrouter.New(
		bunrouter.Use(s.logRequests, s.handleErrors),
		bunrouter.WithNotFoundHandler(func(w http.ResponseWriter, req bunrouter.Request) error {
			return errNoRoute(req.Request, notFound)
		}),
		bunrouter.WithMethodNotAllowedHandler(func(w http.ResponseWriter, req bunrouter.Request) error {
			if allow := s.allow[req.Route()]; len(allow) > 0 {
				w.Header().Set("Allow", strings.Join(allow, ", "))
			}
			return errMethodNotAllowed(req.Method, pathAsSent(req.Request))
		}),
	)
	routes := s.routes()
	if opts.OperationsOnly {
		routes = slices.DeleteFunc(routes, func(rt Route) bool { return !operationPath(rt.Path) })
	}
	s.allow = allowedMethods(routes)
	s.router.WithGroup(apiPrefix, func(g *bunrouter.Group) {
		g = g.Use(s.authenticate)
		for _, rt := range routes {
			if rt.Auth && !rt.Browser {
				g.Handle(rt.Method, strings.TrimPrefix(rt.Path, apiPrefix), rt.Handler)
			}
		}
	})
	s.router.WithGroup(managePrefix, func(g *bunrouter.Group) {
		g = g.Use(s.authenticateAny)
		for _, rt := range routes {
			if rt.Auth && rt.Browser {
				g.Handle(rt.Method, strings.TrimPrefix(rt.Path, managePrefix), rt.Handler)
			}
		}
	})
	for _, rt := range routes {
		switch {
		case !rt.Auth && rt.Browser:
			s.router.Handle(rt.Method, rt.Path, s.crossOriginOnly(rt.Handler))
		case !rt.Auth:
			s.router.Handle(rt.Method, rt.Path, rt.Handler)
			if rt.Method == http.MethodGet {
				// Probes and scrapers may ask with HEAD: the same answer
				// without its body (net/http drops it).
				s.router.Handle(http.MethodHead, rt.Path, rt.Handler)
			}
		}
	}
	s.badPath = s.refusal(&httpError{http.StatusBadRequest, "invalid_path", "the request path contains a control character: check the URL"})
	if opts.Console != nil {
		s.console = s.logRequests(func(w http.ResponseWriter, req bunrouter.Request) error {
			opts.Console.ServeHTTP(w, req.Request)
			infoOf(req.Context()).route = consoleRoute(req.Request)
			return nil
		})
	}
	doc := s.buildOpenAPI(routes)
	s.openAPIJSON = marshalDoc(doc)
	s.docsHTML = s.renderDocs(doc, routes)
	s.schemasHTML = renderSchemas(doc, routes)
	return s
}

// ServeHTTP implements http.Handler. Paths with control characters (a
// decoded %00, say) are refused before routing: no route has them, and the
// router's tree lookup is not safe with a NUL byte. So are an over-long
// header, and a path with a trailing slash or with '.', '..' or empty
// segments, which the router would answer with a redirect without a body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if hasControlChar(r.URL.Path) {
		_ = s.badPath(w, bunrouter.NewRequest(r))
		return
	}
	if n := headerSize(r); n > s.maxHeader {
		_ = s.refusal(&httpError{http.StatusRequestHeaderFieldsTooLarge, "header_too_large",
			fmt.Sprintf("the request's line and headers are %d bytes; the limit is %d: send shorter headers", n, s.maxHeader)})(w, bunrouter.NewRequest(r))
		return
	}
	// The console's paths are the console's to clean and answer.
	if s.console != nil && consolePath(r.URL.Path) {
		_ = s.console(w, bunrouter.NewRequest(r))
		return
	}
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	if path != "/" && (strings.HasSuffix(path, "/") || bunrouter.CleanPath(path) != path) {
		clean := strings.TrimSuffix(bunrouter.CleanPath(path), "/")
		_ = s.refusal(errNoRoute(r, "paths have no trailing slash and no '.', '..' or empty segments: did you mean "+clean+"?"))(w, bunrouter.NewRequest(r))
		return
	}
	s.router.ServeHTTP(w, r)
}

// consolePath says whether a path is the console's: anything outside the
// API (/api) and the probes and metrics.
func consolePath(p string) bool {
	return p != BasePath && !operationPath(p) && !strings.HasPrefix(p, BasePath+"/")
}

// operationPath says whether a path is a probe's or the metrics'.
func operationPath(p string) bool {
	switch p {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// consoleRoute is the route of a request the console answered: the
// pattern its ServeMux matched (http.Request.Pattern, which the mux sets),
// without the method ("/bots/{id}"); "console" when it names none.
func consoleRoute(r *http.Request) string {
	p := r.Pattern
	if _, path, ok := strings.Cut(p, " "); ok {
		p = path
	}
	if p == "" {
		return "console"
	}
	return p
}

// refusal is a logged handler that answers err.
func (s *Server) refusal(err error) bunrouter.HandlerFunc {
	return s.logRequests(s.handleErrors(func(http.ResponseWriter, bunrouter.Request) error { return err }))
}

// errNoRoute is the answer to a path no route has; hint says what to do.
func errNoRoute(r *http.Request, hint string) error {
	return &push.Error{Kind: push.NotFound, Reason: "route_not_found",
		Message: "no such endpoint: " + r.Method + " " + truncate(pathAsSent(r), 200) + ": " + hint}
}

// pathAsSent is the request's path as the client wrote it, with its
// percent-escapes.
func pathAsSent(r *http.Request) string {
	if strings.HasPrefix(r.RequestURI, "/") {
		p, _, _ := strings.Cut(r.RequestURI, "?")
		return p
	}
	return r.URL.EscapedPath()
}

// headerSize is about the size of a request's line and headers as sent,
// the measure of http.Server's MaxHeaderBytes.
func headerSize(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len(r.Host) + 8
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// NewHTTPServer returns an http.Server for h with timeouts that protect
// against slow clients: headers within 10 s, the whole request within 30 s,
// idle connections closed after 2 minutes. WriteTimeout leaves room for the
// synchronous wait. Its MaxHeaderBytes is above the handler's own limit
// (Options.MaxHeaderBytes), so that an over-long header is answered by the
// handler with the error envelope; beyond it net/http answers, in the
// envelope too when the listener is an EnvelopeListener.
func NewHTTPServer(addr string, h http.Handler, syncWait time.Duration) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      syncWait + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    4 * DefaultMaxHeaderBytes,
	}
}

// hasControlChar reports whether s has a byte below 0x20 or DEL.
func hasControlChar(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// allowedMethods maps each route pattern to the methods it answers, HEAD
// included where an unauthenticated GET is (see New).
func allowedMethods(routes []Route) map[string][]string {
	allow := make(map[string][]string)
	for _, rt := range routes {
		allow[rt.Path] = append(allow[rt.Path], rt.Method)
		if !rt.Auth && rt.Method == http.MethodGet {
			allow[rt.Path] = append(allow[rt.Path], http.MethodHead)
		}
	}
	for _, m := range allow {
		slices.Sort(m)
	}
	return allow
}
