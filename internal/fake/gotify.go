package fake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Gotify is a fake Gotify server on loopback. It takes POST /message as
// the real one does: an application token in X-Gotify-Key, ?token= or
// Authorization: Bearer (client tokens may not send), a JSON or form body
// whose message is required, priority and extras, and answers the stored
// message or Gotify's error shape {"error","errorCode","errorDescription"}.
type Gotify struct {
	simpleServer

	apps     map[string]GotifyApp // by application token
	clients  map[string]bool
	nextID   int64
	messages []GotifyMessage
}

// GotifyApp is an application registered on the fake.
type GotifyApp struct {
	ID              int64
	Name            string
	Token           string
	DefaultPriority int
}

// GotifyMessage is one message the fake stored.
type GotifyMessage struct {
	ID       int64
	AppID    int64
	Message  string
	Title    string
	Priority int
	Extras   map[string]any
}

// NewGotify starts a fake Gotify server, closed when the test ends.
func NewGotify(tb testing.TB) *Gotify {
	f := &Gotify{apps: make(map[string]GotifyApp), clients: make(map[string]bool)}
	f.start(tb, f.serve)
	return f
}

// NewApp registers an application and returns its token.
func (f *Gotify) NewApp(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	token := "A" + randomAlnum(14)
	f.apps[token] = GotifyApp{ID: int64(len(f.apps) + 1), Name: name, Token: token, DefaultPriority: 5}
	return token
}

// NewClient registers a client and returns its token (which may read but
// not send messages).
func (f *Gotify) NewClient() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	token := "C" + randomAlnum(14)
	f.clients[token] = true
	return token
}

// Messages returns the messages stored so far.
func (f *Gotify) Messages() []GotifyMessage { return snapshot(&f.mu, &f.messages) }

// GotifyFault is a Gotify error answer, e.g. GotifyFault(400, "Field
// 'message' is required").
func GotifyFault(status int, description string) Fault {
	return jsonFault(status, map[string]any{"error": http.StatusText(status), "errorCode": status, "errorDescription": description})
}

func gotifyError(w http.ResponseWriter, status int, description string) {
	GotifyFault(status, description).write(w)
}

func (f *Gotify) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/message" || r.Method != http.MethodPost {
		gotifyError(w, http.StatusNotFound, "page not found")
		return
	}
	token := r.Header.Get("X-Gotify-Key")
	if token == "" {
		token = r.URL.Query().Get("token")
	}
	if token == "" {
		token, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	f.mu.Lock()
	app, ok := f.apps[token]
	client := f.clients[token]
	f.mu.Unlock()
	switch {
	case client:
		gotifyError(w, http.StatusForbidden, "you are not allowed to access this api")
		return
	case !ok:
		gotifyError(w, http.StatusUnauthorized, "you need to provide a valid access token or user credentials to access this api")
		return
	}
	var in struct {
		Message  *string        `json:"message"`
		Title    string         `json:"title"`
		Priority *int           `json:"priority"`
		Extras   map[string]any `json:"extras"`
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &in); err != nil {
			gotifyError(w, http.StatusBadRequest, "invalid character in JSON: "+err.Error())
			return
		}
	} else {
		r.Body = nopBody(body)
		if err := r.ParseForm(); err == nil {
			if v, ok := r.PostForm["message"]; ok {
				in.Message = &v[0]
			}
			in.Title = r.PostForm.Get("title")
			if v := r.PostForm.Get("priority"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					gotifyError(w, http.StatusBadRequest, "Field 'priority' must be a number")
					return
				}
				in.Priority = &n
			}
		}
	}
	if in.Message == nil || *in.Message == "" {
		gotifyError(w, http.StatusBadRequest, "Field 'message' is required")
		return
	}
	for k := range in.Extras {
		if strings.Count(k, "::") < 1 {
			gotifyError(w, http.StatusBadRequest, "Field 'extras' has an invalid key: "+k)
			return
		}
	}
	m := GotifyMessage{AppID: app.ID, Message: *in.Message, Title: in.Title, Priority: app.DefaultPriority, Extras: in.Extras}
	if in.Priority != nil {
		m.Priority = *in.Priority
	}
	if m.Title == "" {
		m.Title = app.Name
	}
	f.mu.Lock()
	f.nextID++
	m.ID = f.nextID
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	ans := map[string]any{"id": m.ID, "appid": m.AppID, "message": m.Message, "title": m.Title, "priority": m.Priority,
		"date": time.Now().UTC().Format(time.RFC3339Nano)}
	if m.Extras != nil {
		ans["extras"] = m.Extras
	}
	writeJSONAnswer(w, http.StatusOK, ans)
}
