// Package transport is Herald's HTTP front: the routes of the HTTP contract
// under /api, on bunrouter, as one client of the push engine. It is the only
// package that knows HTTP statuses.
package transport

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// BasePath is where the API lives.
const BasePath = "/api"

// DefaultMaxBody caps request bodies (1 MiB).
const DefaultMaxBody = 1 << 20

// Options configure the HTTP front.
type Options struct {
	// Logger receives one line per request and internal errors.
	Logger *slog.Logger
	// MaxBody caps request bodies in bytes (default 1 MiB); a larger
	// body gets 413.
	MaxBody int64
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
	// Console, when set, answers every path outside /api and the probes
	// and metrics: the web console (package transport/console).
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
	eng     *push.Engine
	log     *slog.Logger
	maxBody int64
	router  *bunrouter.Router
	obs     RequestObserver
	metrics http.Handler
	ready   []ReadyCheck
	version string

	publicURL   string
	crossOrigin *http.CrossOriginProtection

	openAPIJSON []byte                // GET /api/openapi.json
	docsHTML    []byte                // GET /api/docs
	badPath     bunrouter.HandlerFunc // the logged refusal of a path with a control character
	console     bunrouter.HandlerFunc // the logged web console; nil without one
}

// New returns the HTTP front of eng.
func New(eng *push.Engine, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{eng: eng, log: opts.Logger, maxBody: opts.MaxBody, obs: opts.Observer, metrics: opts.Metrics, version: opts.Version,
		publicURL: opts.PublicURL, crossOrigin: http.NewCrossOriginProtection()}
	s.ready = append([]ReadyCheck{{Name: "database", Check: eng.Ping}}, opts.Ready...)
	s.router = bunrouter.New(
		bunrouter.Use(s.logRequests, s.handleErrors),
		bunrouter.WithNotFoundHandler(func(w http.ResponseWriter, req bunrouter.Request) error {
			return &push.Error{Kind: push.NotFound, Reason: "route_not_found",
				Message: "no such endpoint: " + req.Method + " " + req.URL.Path + ": see the API documentation"}
		}),
		bunrouter.WithMethodNotAllowedHandler(func(w http.ResponseWriter, req bunrouter.Request) error {
			return errMethodNotAllowed(req.Method, req.URL.Path)
		}),
	)
	routes := s.routes()
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
		}
	}
	s.badPath = s.logRequests(s.handleErrors(func(http.ResponseWriter, bunrouter.Request) error {
		return &httpError{http.StatusBadRequest, "invalid_path", "the request path contains a control character: check the URL"}
	}))
	if opts.Console != nil {
		s.console = s.logRequests(func(w http.ResponseWriter, req bunrouter.Request) error {
			opts.Console.ServeHTTP(w, req.Request)
			return nil
		})
	}
	doc := s.buildOpenAPI(routes)
	s.openAPIJSON = marshalDoc(doc)
	s.docsHTML = s.renderDocs(doc, routes)
	return s
}

// ServeHTTP implements http.Handler. Paths with control characters (a
// decoded %00, say) are refused before routing: no route has them, and the
// router's tree lookup is not safe with a NUL byte.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if hasControlChar(r.URL.Path) {
		_ = s.badPath(w, bunrouter.NewRequest(r))
		return
	}
	if s.console != nil && consolePath(r.URL.Path) {
		_ = s.console(w, bunrouter.NewRequest(r))
		return
	}
	s.router.ServeHTTP(w, r)
}

// consolePath says whether a path is the console's: anything outside the
// API (/api) and the probes and metrics.
func consolePath(p string) bool {
	switch p {
	case BasePath, "/healthz", "/readyz", "/metrics":
		return false
	}
	return !strings.HasPrefix(p, BasePath+"/")
}

// NewHTTPServer returns an http.Server for h with timeouts that protect
// against slow clients: headers within 10 s, the whole request within 30 s,
// idle connections closed after 2 minutes. WriteTimeout leaves room for the
// synchronous wait.
func NewHTTPServer(addr string, h http.Handler, syncWait time.Duration) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      syncWait + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
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
