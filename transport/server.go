// Package transport is Herald's HTTP front: the routes of the HTTP contract
// under /api, on bunrouter, as one client of the push engine. It is the only
// package that knows HTTP statuses.
package transport

import (
	"io"
	"log/slog"
	"net/http"
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
}

// Server is the HTTP front of an engine.
type Server struct {
	eng     *push.Engine
	log     *slog.Logger
	maxBody int64
	router  *bunrouter.Router
}

// New returns the HTTP front of eng.
func New(eng *push.Engine, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	s := &Server{eng: eng, log: opts.Logger, maxBody: opts.MaxBody}
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
	s.router.WithGroup(BasePath+"/openapi", func(g *bunrouter.Group) {
		g = g.Use(s.authenticate)
		for _, rt := range s.routes() {
			g.Handle(rt.Method, rt.Path, rt.Handler)
		}
	})
	return s
}

// ServeHTTP implements http.Handler. Paths with control characters (a
// decoded %00, say) are refused before routing: no route has them, and the
// router's tree lookup is not safe with a NUL byte.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for i := 0; i < len(r.URL.Path); i++ {
		if c := r.URL.Path[i]; c < 0x20 || c == 0x7f {
			writeJSON(w, http.StatusBadRequest, errorBody{Code: http.StatusBadRequest, Error: "invalid_path",
				Message: "the request path contains a control character: check the URL"})
			return
		}
	}
	s.router.ServeHTTP(w, r)
}

// Route is one endpoint of the API.
type Route struct {
	Method  string
	Path    string // under /api/openapi
	Summary string
	Handler bunrouter.HandlerFunc
}

// routes is the route table: every endpoint of the HTTP contract and the
// extensions.
func (s *Server) routes() []Route {
	return []Route{
		{http.MethodPost, "/v1/push/private", "Send one message (recommended)", s.sendPrivate},
		{http.MethodPost, "/send", "Send one message (compatibility)", s.sendCompat},
		{http.MethodPost, "/batch-send", "Batch send to several targets of one bot", s.batchSend},
		{http.MethodPost, "/v1/push/batch", "Batch send across several bots", s.multiSend},
		{http.MethodGet, "/queue/:id", "Query a job", s.queryJob},
		{http.MethodGet, "/queue-request", "Recover a single send by its Idempotency-Key", s.queryByKey},
		{http.MethodPost, "/queue/:id/cancel", "Cancel a queued job (extension)", s.cancelJob},
	}
}

// Routes lists the API's endpoints with their full paths.
func (s *Server) Routes() []Route {
	rs := s.routes()
	for i := range rs {
		rs[i].Path = BasePath + "/openapi" + rs[i].Path
		rs[i].Handler = nil
	}
	return rs
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
