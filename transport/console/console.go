// Package console is Herald's web console: server-rendered pages where a
// person signs in and manages an account's bots, targets, keys, jobs and
// points, on the engine's own verbs with the signed-in session's
// principal, so the engine checks every object against the session's
// account. Its assets are embedded; it asks no other host for anything,
// sends a strict Content-Security-Policy, and every form works without
// JavaScript (POST, then a redirect or a page).
package console

import (
	"context"
	"embed"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/heraldpush/herald/push"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the console.
type Options struct {
	// Logger receives internal errors.
	Logger *slog.Logger
	// PublicURL is where people reach the server; an https URL makes the
	// console's cookies Secure behind a TLS-terminating proxy.
	PublicURL string
	// DocsPath is the API documentation's page (default /api/docs).
	DocsPath string
	// Health, when set, gives the operators' health page its numbers
	// (the ones /metrics serves).
	Health func(ctx context.Context) ([]Number, error)
}

// Console is the web console's http.Handler.
type Console struct {
	eng         *push.Engine
	log         *slog.Logger
	publicURL   string
	docsPath    string
	crossOrigin *http.CrossOriginProtection
	langs       languages
	pages       map[string]*template.Template
	mux         *http.ServeMux
	static      http.Handler
	health      func(ctx context.Context) ([]Number, error)
	patterns    []string // every route, for the tests that try them all
}

// New returns the console of eng. It parses its templates once.
func New(eng *push.Engine, opts Options) (*Console, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.DocsPath == "" {
		opts.DocsPath = "/api/docs"
	}
	c := &Console{eng: eng, log: opts.Logger, publicURL: opts.PublicURL, docsPath: opts.DocsPath,
		crossOrigin: http.NewCrossOriginProtection(), langs: newLanguages(), health: opts.Health}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = pages
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c.static = http.StripPrefix("/static/", http.FileServerFS(sub))
	c.mux = http.NewServeMux()
	c.routes()
	return c, nil
}

// ServeHTTP implements http.Handler: every answer carries the console's
// security headers; a request that changes anything must come from the
// console's own pages.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if err := c.crossOrigin.Check(r); err != nil {
		_, r.Pattern = c.mux.Handler(r) // the route it was refused on, for the metrics
		c.fail(w, r, &push.Error{Kind: push.Forbidden, Reason: "cross_origin",
			Message: "this form was sent from another site: it was refused to protect your account; use this server's own pages"})
		return
	}
	c.mux.ServeHTTP(w, r)
}

// ContentSecurityPolicy is the console's policy: its own scripts, styles
// and images only (and data: images for the QR codes), no frames around
// it, forms to itself only.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secure says whether the console's cookies are Secure.
func (c *Console) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(c.publicURL, "https://")
}

// handle registers a route.
func (c *Console) handle(pattern string, h http.HandlerFunc) {
	c.patterns = append(c.patterns, pattern)
	c.mux.HandleFunc(pattern, h)
}

// Routes returns the pattern of every route ("GET /bots/{id}").
func (c *Console) Routes() []string { return append([]string(nil), c.patterns...) }

// routes registers every page; each resource's file registers its own.
func (c *Console) routes() {
	c.mux.Handle("GET /static/", c.static)
	c.handle("GET /lang/{lang}", c.switchLanguage)
	c.authRoutes()
	c.homeRoutes()
	c.botRoutes()
	c.targetRoutes()
	c.keyRoutes()
	c.jobRoutes()
	c.peopleRoutes()
	c.operatorRoutes()
	c.healthRoutes()
	c.handle("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, push.Errorf(push.NotFound, "page_not_found", "there is no page here: check the address, or start from the dashboard"))
	})
}
