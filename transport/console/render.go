package console

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// frame is what every page shows around its content: the language, who is
// signed in, the forms' token, the note of a form that worked. Each page's
// view embeds it; templates call its methods ({{.T "key"}}).
type frame struct {
	lang     *catalog
	Title    string // a catalog key
	Path     string // the page's path and query, for the language switch
	SignedIn bool
	Operator bool
	Email    string
	CSRF     string
	Done     string // a catalog key: what the last form did
	Nav      string // the menu entry to mark as current
	DocsPath string
}

// T translates a catalog key in the page's language; with args, the
// entry is a fmt format.
func (f *frame) T(key string, args ...any) string { return f.lang.t(key, args...) }

// Lang is the page's language tag (en or zh-CN).
func (f *frame) Lang() string { return f.lang.Tag }

// OtherLangs are the languages to switch to.
func (f *frame) OtherLangs() []*catalog { return f.lang.others }

// Time formats a time for a page, in UTC; a zero time is a dash.
func (f *frame) Time(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// Nonce is a fresh random value for a form whose sending must happen
// once however often it is sent (it becomes an idempotency key).
func (f *frame) Nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// State names a job state in the page's language.
func (f *frame) State(s push.State) string { return f.lang.t("state." + string(s)) }

// newFrame starts a page's frame.
func (c *Console) newFrame(q *request, title, nav string) *frame {
	done := ""
	if d := q.r.URL.Query().Get("done"); d != "" && q.lang.has("done."+d) {
		done = "done." + d
	}
	return &frame{lang: q.lang, Title: title, Path: q.r.URL.RequestURI(), SignedIn: q.signedIn, Operator: q.p.Operator(),
		Email: q.p.Email, CSRF: q.csrf, Done: done, Nav: nav, DocsPath: c.docsPath}
}

// parsePages parses each page's template with the layout, once.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := make(map[string]*template.Template)
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		t, err := template.New(name).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: parse %s: %w", n, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes a page with its view; the page is made in full before
// anything is written, so a template error is an error page, not half a
// page.
func (c *Console) render(q *request, status int, name string, view any) error {
	t, ok := c.pages[name]
	if !ok {
		return fmt.Errorf("console: no page %q", name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", view); err != nil {
		return fmt.Errorf("console: render %s: %w", name, err)
	}
	h := q.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", q.lang.Tag)
	h.Add("Vary", "Accept-Language, Cookie")
	q.w.WriteHeader(status)
	_, _ = q.w.Write(buf.Bytes())
	return nil
}

// errorView is the error page.
type errorView struct {
	*frame
	Status  int
	Message string
	Back    string
}

// fail answers an error with the error page: the engine's kind gives the
// status, its message says what is wrong and what to do. Internal errors
// are logged and shown without their details.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	q := c.newRequest(w, r)
	if ck, e := r.Cookie(transport.SessionCookie); e == nil && ck.Value != "" {
		q.csrf = sessionCSRF(ck.Value)
		q.signedIn = true // for the menu only; nothing is shown from the account
	}
	kind := push.KindOf(err)
	status := transport.StatusOf(kind)
	msg := err.Error()
	if pe, ok := err.(*push.Error); ok && pe.Message != "" {
		msg = pe.Message
	}
	if status >= 500 && kind != push.Unavailable {
		c.log.Error("console", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = q.lang.t("error.internal")
	}
	back := r.Referer()
	if back == "" || !strings.HasPrefix(back, "/") && !sameOrigin(back, r) {
		back = "/"
	}
	v := &errorView{frame: c.newFrame(q, "error.title", ""), Status: status, Message: msg, Back: back}
	if rerr := c.render(q, status, "error", v); rerr != nil {
		c.log.Error("console: error page", "err", rerr)
		http.Error(w, msg, status)
	}
}

// sameOrigin says whether an absolute URL is on the request's host.
func sameOrigin(u string, r *http.Request) bool {
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(u, "https://")
	}
	host, _, _ := strings.Cut(rest, "/")
	return ok && host == r.Host
}
