package fake

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Ntfy is a fake ntfy server on loopback. It publishes as the real one
// does: JSON publish to "/" and plain publish to "/<topic>", topic names,
// access tokens and users (401 for bad credentials, 403 for a protected
// topic), the message size limit (a body of the limit or longer becomes a
// file attachment, or 400 40014 when attachments are off; next to an
// attachment URL it is cut at the limit), the JSON body limit (a body of
// twice the message limit or longer is 413 41303), and
// ntfy's error shape {"code","http","error","link"}, and ntfy's limit on
// failed authentications (a bucket of 30 per client address, one back
// per minute; an empty bucket answers every request that carries
// credentials, right or wrong, with 429 42909), and GET /v1/account,
// which names the authenticated user ("*" for anonymous).
type Ntfy struct {
	simpleServer

	noAuth bool // a server without auth-file: credentials are ignored

	authBurst    float64   // the bucket of failed authentications: its size,
	authTokens   float64   // what is left,
	authRefilled time.Time // and when it was last topped up

	limit       int
	attachments bool
	tokens      map[string]string          // token -> user
	users       map[string]string          // user -> password
	protected   map[string]map[string]bool // topic -> users with write access
	messages    []NtfyMessage
	topicRe     *regexp.Regexp
}

// NtfyMessage is one message the fake published.
type NtfyMessage struct {
	ID       string
	Topic    string
	Message  string
	Title    string
	Markdown bool
	// Attach is the external attachment URL (an image).
	Attach   string
	Filename string
	// AsFile is true when the body was too long and became a file
	// attachment instead of the message.
	AsFile bool
	// User is the authenticated user, "" for anonymous.
	User string
}

// NewNtfy starts a fake ntfy server with the default message limit (4096
// bytes) and attachments enabled, closed when the test ends.
func NewNtfy(tb testing.TB) *Ntfy {
	f := &Ntfy{
		limit:       4096,
		attachments: true,
		tokens:      make(map[string]string),
		users:       make(map[string]string),
		protected:   make(map[string]map[string]bool),
		topicRe:     regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`),
		authBurst:   ntfyAuthFailureBurst,
		authTokens:  ntfyAuthFailureBurst,
	}
	f.start(tb, f.serve)
	return f
}

// ntfy's defaults for failed authentications: visitor-auth-failure-limit-burst
// and visitor-auth-failure-limit-replenish. The fake serves one address
// (loopback), so one bucket.
const (
	ntfyAuthFailureBurst     = 30
	ntfyAuthFailureReplenish = time.Minute
)

// SetAuthFailureLimit sets how many failed authentications the server
// takes before it answers 429 42909 (ntfy's default is 30), and fills the
// bucket.
func (f *Ntfy) SetAuthFailureLimit(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.authBurst, f.authTokens, f.authRefilled = float64(n), float64(n), time.Now()
}

// authAllowedLocked tops the bucket of failed authentications up and
// reports whether it has one left.
func (f *Ntfy) authAllowedLocked() bool {
	now := time.Now()
	if !f.authRefilled.IsZero() {
		f.authTokens = min(f.authBurst, f.authTokens+float64(now.Sub(f.authRefilled))/float64(ntfyAuthFailureReplenish))
	}
	f.authRefilled = now
	return f.authTokens >= 1
}

// SetMessageLimit sets the server's message-size-limit in bytes.
func (f *Ntfy) SetMessageLimit(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limit = n
}

// SetAttachments turns file attachments on or off.
func (f *Ntfy) SetAttachments(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attachments = on
}

// Protect makes a topic writable only by the users given access.
func (f *Ntfy) Protect(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.protected[topic] == nil {
		f.protected[topic] = make(map[string]bool)
	}
}

// AddUser creates a user with write access to the topics and returns an
// access token for it.
func (f *Ntfy) AddUser(user, password string, topics ...string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[user] = password
	for _, t := range topics {
		if f.protected[t] == nil {
			f.protected[t] = make(map[string]bool)
		}
		f.protected[t][user] = true
	}
	token := "tk_" + strings.ToLower(randomAlnum(29))
	f.tokens[token] = user
	return token
}

// DisableAuth makes the fake a server without access control (no
// auth-file): it ignores any credentials and treats every request as
// anonymous, as ntfy does.
func (f *Ntfy) DisableAuth() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noAuth = true
}

// Messages returns the messages published so far.
func (f *Ntfy) Messages() []NtfyMessage { return snapshot(&f.mu, &f.messages) }

// NtfyFault is an ntfy error answer, e.g. NtfyFault(429, 42901, "limit
// reached: too many requests").
func NtfyFault(status, code int, msg string) Fault {
	f := jsonFault(status, map[string]any{"code": code, "http": status, "error": msg, "link": "https://ntfy.sh/docs/publish/#limitations"})
	f.Body += "\n"
	return f
}

func ntfyError(w http.ResponseWriter, status, code int, msg string) {
	NtfyFault(status, code, msg).write(w)
}

// ntfyPublish is the JSON publish body.
type ntfyPublish struct {
	Topic    string `json:"topic"`
	Message  string `json:"message"`
	Title    string `json:"title"`
	Priority int    `json:"priority"`
	Markdown bool   `json:"markdown"`
	Attach   string `json:"attach"`
	Filename string `json:"filename"`
}

func (f *Ntfy) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/account" {
		f.account(w, r)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		ntfyError(w, http.StatusNotFound, 40401, "page not found")
		return
	}
	user, ok, limited := f.authenticate(r)
	if limited {
		ntfyError(w, http.StatusTooManyRequests, 42909, "limit reached: too many auth failures")
		return
	}
	if !ok {
		ntfyError(w, http.StatusUnauthorized, 40101, "unauthorized")
		return
	}
	f.mu.Lock()
	limit, attachments := f.limit, f.attachments
	f.mu.Unlock()
	var p ntfyPublish
	if r.URL.Path == "/" {
		// ntfy peeks at most twice the limit and refuses a body that
		// fills it (util.Peek's LimitReached is read == limit).
		if len(body) >= 2*limit {
			ntfyError(w, http.StatusRequestEntityTooLarge, 41303, "JSON body too large")
			return
		}
		if err := json.Unmarshal(body, &p); err != nil {
			ntfyError(w, http.StatusBadRequest, 40024, "invalid request: request body must be valid JSON")
			return
		}
	} else {
		p = ntfyPublish{
			Topic:    strings.TrimPrefix(r.URL.Path, "/"),
			Message:  string(body),
			Title:    ntfyParam(r, "x-title", "title", "t"),
			Attach:   ntfyParam(r, "x-attach", "attach", "a"),
			Filename: ntfyParam(r, "x-filename", "filename", "file", "f"),
		}
		md := strings.ToLower(ntfyParam(r, "x-markdown", "markdown", "md"))
		p.Markdown = md == "yes" || md == "true" || md == "1" || strings.HasPrefix(r.Header.Get("Content-Type"), "text/markdown")
	}
	if !f.topicRe.MatchString(p.Topic) {
		ntfyError(w, http.StatusBadRequest, 40009, "invalid request: topic invalid")
		return
	}
	if !f.mayWrite(user, p.Topic) {
		ntfyError(w, http.StatusForbidden, 40301, "forbidden")
		return
	}
	if p.Priority < 0 || p.Priority > 5 {
		ntfyError(w, http.StatusBadRequest, 40007, "invalid priority parameter")
		return
	}
	m := NtfyMessage{ID: randomAlnum(12), Topic: p.Topic, Title: p.Title, Markdown: p.Markdown, User: user, Filename: p.Filename}
	if p.Attach != "" {
		if !strings.HasPrefix(p.Attach, "http://") && !strings.HasPrefix(p.Attach, "https://") {
			ntfyError(w, http.StatusBadRequest, 40013, "invalid request: attachment URL is invalid")
			return
		}
		m.Attach = p.Attach
		if m.Filename == "" {
			if u, err := url.Parse(p.Attach); err == nil {
				m.Filename = path.Base(u.Path)
			}
		}
	}
	msg := p.Message
	switch {
	case m.Attach != "":
		// The body is the message, cut at the peek limit.
		if len(msg) > limit {
			msg = msg[:limit]
		}
		if !utf8.ValidString(msg) {
			ntfyError(w, http.StatusBadRequest, 40011, "invalid message: message must be UTF-8 encoded")
			return
		}
		m.Message = strings.TrimSpace(msg)
	case len(msg) < limit && utf8.ValidString(msg):
		// As ntfy: a body that fills the peeked limit is taken for a
		// longer one and becomes a file, even at exactly the limit.
		m.Message = strings.TrimSpace(msg)
		if m.Message == "" {
			m.Message = "triggered"
		}
	case !attachments:
		ntfyError(w, http.StatusBadRequest, 40014, "invalid request: attachments not allowed")
		return
	default:
		m.AsFile = true
		m.Filename = "attachment.txt"
		m.Message = "You received a file: attachment.txt"
	}
	f.mu.Lock()
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	now := time.Now()
	ans := map[string]any{"id": m.ID, "time": now.Unix(), "expires": now.Add(12 * time.Hour).Unix(),
		"event": "message", "topic": m.Topic, "message": m.Message}
	if m.Title != "" {
		ans["title"] = m.Title
	}
	if m.Markdown {
		ans["content_type"] = "text/markdown"
	}
	if m.Attach != "" || m.AsFile {
		ans["attachment"] = map[string]any{"name": m.Filename, "url": m.Attach}
	}
	writeJSONAnswer(w, http.StatusOK, ans)
}

// account answers GET /v1/account: 401 for unknown credentials (429 once
// too many failed), else the user's name and role (ntfy's "*" and
// "anonymous" without credentials or on a server without access control).
func (f *Ntfy) account(w http.ResponseWriter, r *http.Request) {
	user, ok, limited := f.authenticate(r)
	if limited {
		ntfyError(w, http.StatusTooManyRequests, 42909, "limit reached: too many auth failures")
		return
	}
	if !ok {
		ntfyError(w, http.StatusUnauthorized, 40101, "unauthorized")
		return
	}
	ans := map[string]any{"username": "*", "role": "anonymous", "limits": map[string]any{"basis": "ip"}}
	if user != "" {
		ans["username"], ans["role"] = user, "user"
	}
	writeJSONAnswer(w, http.StatusOK, ans)
}

// authenticate reads Bearer or Basic credentials (or none). It reports
// false for credentials the server does not know, and limited, without
// looking at them, when too many credentials failed lately.
func (f *Ntfy) authenticate(r *http.Request) (user string, ok, limited bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		h = r.URL.Query().Get("auth")
	}
	if h == "" {
		return "", true, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noAuth {
		return "", true, false
	}
	if !f.authAllowedLocked() {
		return "", false, true
	}
	user, ok = f.credentialsLocked(r)
	if !ok {
		f.authTokens--
	}
	return user, ok, false
}

// credentialsLocked checks the request's credentials.
func (f *Ntfy) credentialsLocked(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		dec, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(r.URL.Query().Get("auth"), "="))
		if err != nil {
			return "", false
		}
		h = string(dec)
	}
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		u, known := f.tokens[tok]
		return u, known
	}
	if b, ok := strings.CutPrefix(h, "Basic "); ok {
		dec, err := base64.StdEncoding.DecodeString(b)
		if err != nil {
			return "", false
		}
		user, pass, _ := strings.Cut(string(dec), ":")
		if pw, known := f.users[user]; known && pw == pass && pass != "" {
			return user, true
		}
		if u, known := f.tokens[pass]; known && user == "" { // Basic with an empty user and a token
			return u, true
		}
	}
	return "", false
}

func (f *Ntfy) mayWrite(user, topic string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	acl, protected := f.protected[topic]
	return !protected || acl[user]
}

func ntfyParam(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
		if v := r.URL.Query().Get(n); v != "" {
			return v
		}
	}
	return ""
}
