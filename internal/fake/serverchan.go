package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// ServerChan is a fake Server酱 API on loopback, for both ServerChan Turbo
// keys (POST /<SendKey>.send) and Server酱³ keys (POST
// /send/<sctp…>.send, which the real service serves on
// <uid>.push.ft07.com). It reads form or JSON bodies and checks the
// SendKey, the required title of at most 32 characters and the desp of at
// most 32 KB; it answers {"code":0,"message":"","data":{"pushid",
// "readkey","error":"SUCCESS","errno":0}}. Its non-zero codes other than
// 40001 for a bad key are assumptions: the service documents none.
type ServerChan struct {
	simpleServer

	keys     map[string]bool
	nextID   int64
	messages []ServerChanMessage
	routeRe  *regexp.Regexp
}

// ServerChanMessage is one message the fake accepted.
type ServerChanMessage struct {
	SendKey string
	V3      bool // sent to the Server酱³ path
	Title   string
	Desp    string
	PushID  string
}

// NewServerChan starts a fake ServerChan API, closed when the test ends.
func NewServerChan(tb testing.TB) *ServerChan {
	f := &ServerChan{keys: make(map[string]bool), routeRe: regexp.MustCompile(`^/(send/)?([A-Za-z0-9]+)\.send$`)}
	f.start(tb, f.serve)
	return f
}

// NewSendKey registers a ServerChan Turbo SendKey.
func (f *ServerChan) NewSendKey() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fmt.Sprintf("SCT%dT%s", 100000+len(f.keys), randomAlnum(30))
	f.keys[k] = true
	return k
}

// NewSendKey3 registers a Server酱³ SendKey of the user uid.
func (f *ServerChan) NewSendKey3(uid int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fmt.Sprintf("sctp%dt%s", uid, randomAlnum(30))
	f.keys[k] = true
	return k
}

// Messages returns the messages accepted so far.
func (f *ServerChan) Messages() []ServerChanMessage { return snapshot(&f.mu, &f.messages) }

// ServerChanFault is a ServerChan refusal (HTTP 200 with a non-zero code).
func ServerChanFault(code int, msg string) Fault { return scBody(code, msg, nil) }

// scBody is ServerChan's answer: always HTTP 200 with
// {"code","message","data"}.
func scBody(code int, msg string, data any) Fault {
	return jsonFault(http.StatusOK, map[string]any{"code": code, "message": msg, "data": data})
}

func scAnswer(w http.ResponseWriter, code int, msg string, data any) {
	scBody(code, msg, data).write(w)
}

func (f *ServerChan) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	m := f.routeRe.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	v3, key := m[1] != "", m[2]
	f.mu.Lock()
	known := f.keys[key]
	f.mu.Unlock()
	if !known || v3 != strings.HasPrefix(key, "sctp") {
		scAnswer(w, 40001, "bad pushtoken", nil)
		return
	}
	var in struct {
		Title string `json:"title"`
		Text  string `json:"text"` // the older name of title
		Desp  string `json:"desp"`
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &in); err != nil {
			scAnswer(w, 40004, "bad json", nil)
			return
		}
	} else {
		r.Body = nopBody(body)
		_ = r.ParseForm()
		in.Title, in.Text, in.Desp = r.Form.Get("title"), r.Form.Get("text"), r.Form.Get("desp")
	}
	if in.Title == "" {
		in.Title = in.Text
	}
	switch {
	case strings.TrimSpace(in.Title) == "":
		scAnswer(w, 40002, "title不能为空", nil)
		return
	case utf8.RuneCountInString(in.Title) > 32:
		scAnswer(w, 40003, "title最长32个字符", nil)
		return
	case len(in.Desp) > 32<<10:
		scAnswer(w, 40003, "desp最大32KB", nil)
		return
	}
	f.mu.Lock()
	f.nextID++
	msg := ServerChanMessage{SendKey: key, V3: v3, Title: in.Title, Desp: in.Desp, PushID: fmt.Sprint(180000000 + f.nextID)}
	f.messages = append(f.messages, msg)
	f.mu.Unlock()
	scAnswer(w, 0, "", map[string]any{"pushid": msg.PushID, "readkey": "SCT" + randomAlnum(12), "error": "SUCCESS", "errno": 0})
}
