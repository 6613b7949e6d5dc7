package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// request is one request to a page: who makes it, in which language, and
// the token its forms carry.
type request struct {
	w    http.ResponseWriter
	r    *http.Request
	lang *catalog
	// p is the signed-in session's principal (zero when nobody is).
	p        push.Principal
	signedIn bool
	// csrf is the token every form of the page carries: derived from the
	// session's token when signed in, else the anonymous cookie's.
	csrf string
}

// handler is a page's handler; an error it returns becomes an error page.
type handler func(q *request) error

// csrfCookie holds the token of the forms shown before sign-in.
const csrfCookie = "herald_csrf"

// csrfField is the forms' hidden field with the token.
const csrfField = "csrf"

// sessionCSRF is the form token of a session: a hash of its token, which
// only the browser that holds the (HttpOnly) cookie can know.
func sessionCSRF(token string) string {
	sum := sha256.Sum256([]byte("herald console form\x00" + token))
	return hex.EncodeToString(sum[:16])
}

// page wraps a handler that needs a signed-in session: without one, GET
// goes to the sign-in page and anything else is refused.
func (c *Console) page(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := c.newRequest(w, r)
		ck, err := r.Cookie(transport.SessionCookie)
		if err != nil || ck.Value == "" {
			c.toSignIn(q)
			return
		}
		p, err := c.eng.Sessions().Authenticate(r.Context(), ck.Value)
		if err != nil {
			if push.KindOf(err) == push.Unauthenticated || push.KindOf(err) == push.Forbidden {
				c.clearCookie(w, r, transport.SessionCookie)
				if r.Method == http.MethodGet {
					http.Redirect(w, r, "/signin?ended=1&next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
					return
				}
			}
			c.fail(w, r, err)
			return
		}
		p.Address = clientAddress(r)
		q.p, q.signedIn, q.csrf = p, true, sessionCSRF(ck.Value)
		// A person's pages count against the same per-person rate limit as
		// the management API; the small JSON answers pages poll do not.
		if !strings.HasSuffix(r.URL.Path, "/status") && !strings.HasSuffix(r.URL.Path, "/state") {
			if _, err := c.eng.Keys().Admit(r.Context(), p); err != nil {
				if wait := push.RetryAfterOf(err); wait > 0 {
					w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)))
				}
				c.fail(w, r, err)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !c.formTokenOK(q) {
			return
		}
		if err := h(q); err != nil {
			c.fail(w, r, err)
		}
	}
}

// open wraps a handler that needs no session (signing in or up): its
// forms carry the anonymous cookie's token.
func (c *Console) open(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := c.newRequest(w, r)
		if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) == 32 {
			q.csrf = ck.Value
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !c.formTokenOK(q) {
			return
		}
		if q.csrf == "" {
			var b [16]byte
			_, _ = rand.Read(b[:])
			q.csrf = hex.EncodeToString(b[:])
			http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: q.csrf, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: c.secure(r)})
		}
		if err := h(q); err != nil {
			c.fail(w, r, err)
		}
	}
}

// formTokenOK checks a form's token, and answers the refusal itself when
// it is missing or wrong.
func (c *Console) formTokenOK(q *request) bool {
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, maxForm)
	got := q.r.PostFormValue(csrfField)
	if q.csrf != "" && subtle.ConstantTimeCompare([]byte(got), []byte(q.csrf)) == 1 {
		return true
	}
	c.fail(q.w, q.r, &push.Error{Kind: push.Forbidden, Reason: "form_expired",
		Message: "this form is out of date or did not come from this server's pages: reload the page and send it again"})
	return false
}

// maxForm caps a form's body.
const maxForm = 64 << 10

func (c *Console) newRequest(w http.ResponseWriter, r *http.Request) *request {
	w.Header().Set("Cache-Control", "no-store")
	return &request{w: w, r: r, lang: c.langs.of(r)}
}

// toSignIn sends a visitor without a session to the sign-in page, and
// back here after it.
func (c *Console) toSignIn(q *request) {
	if q.r.Method != http.MethodGet {
		c.fail(q.w, q.r, push.Errorf(push.Unauthenticated, "not_signed_in", "you are not signed in: sign in, then send the form again"))
		return
	}
	next := ""
	if q.r.URL.Path != "/" {
		next = "?next=" + url.QueryEscape(q.r.URL.RequestURI())
	}
	http.Redirect(q.w, q.r, "/signin"+next, http.StatusSeeOther)
}

// redirect answers a form that worked: 303 to a page, with a note the
// page shows (a catalog key).
func (q *request) redirect(path, done string) error {
	if done != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "done=" + url.QueryEscape(done)
	}
	http.Redirect(q.w, q.r, path, http.StatusSeeOther)
	return nil
}

// localPath returns next when it is a path on this server, else "/".
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

func (c *Console) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.secure(r)})
}

func (c *Console) setSessionCookie(q *request, token string, expires time.Time) {
	http.SetCookie(q.w, &http.Cookie{Name: transport.SessionCookie, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.secure(q.r)})
}

// clientAddress is the request's remote IP address.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
