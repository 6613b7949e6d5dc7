package fake

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// PushPlus is a fake PushPlus API on loopback. It takes POST /send (and
// /send/<token>) as the real one does: the body is read only with
// Content-Type: application/json, the token must be known (903), content
// is required and the template must be one PushPlus has (999); every
// answer is HTTP 200 with {"code","msg","data"}, data being the 流水号 of
// an accepted message. The wording of the 999 messages is an assumption.
type PushPlus struct {
	simpleServer

	tokens   map[string]bool
	messages []PushPlusMessage
}

// PushPlusMessage is one message the fake accepted.
type PushPlusMessage struct {
	Token    string
	Title    string
	Content  string
	Template string
	Topic    string
	Serial   string // the 流水号
}

// NewPushPlus starts a fake PushPlus API, closed when the test ends.
func NewPushPlus(tb testing.TB) *PushPlus {
	f := &PushPlus{tokens: make(map[string]bool)}
	f.start(tb, f.serve)
	return f
}

// NewToken registers a user token.
func (f *PushPlus) NewToken() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := strings.ToLower(randomAlnum(32))
	f.tokens[t] = true
	return t
}

// Messages returns the messages accepted so far.
func (f *PushPlus) Messages() []PushPlusMessage { return snapshot(&f.mu, &f.messages) }

// PushPlusFault is a PushPlus refusal, e.g. PushPlusFault(900, "用户账号使用受限").
func PushPlusFault(code int, msg string) Fault { return ppBody(code, msg, nil) }

// ppBody is PushPlus's answer: always HTTP 200 with {"code","msg","data"}.
func ppBody(code int, msg string, data any) Fault {
	return jsonFault(http.StatusOK, map[string]any{"code": code, "msg": msg, "data": data})
}

func ppAnswer(w http.ResponseWriter, code int, msg string, data any) {
	ppBody(code, msg, data).write(w)
}

func (f *PushPlus) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/send" && !strings.HasPrefix(r.URL.Path, "/send/") {
		http.NotFound(w, r)
		return
	}
	var in struct {
		Token    string `json:"token"`
		Title    string `json:"title"`
		Content  string `json:"content"`
		Template string `json:"template"`
		Topic    string `json:"topic"`
	}
	// Without the JSON content type PushPlus does not see the body.
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &in); err != nil {
			ppAnswer(w, 999, "请求参数格式错误", nil)
			return
		}
	}
	q := r.URL.Query()
	if in.Token == "" {
		in.Token = q.Get("token")
	}
	if t := strings.TrimPrefix(r.URL.Path, "/send/"); t != r.URL.Path {
		in.Token = t
	}
	if in.Content == "" {
		in.Content = q.Get("content")
	}
	f.mu.Lock()
	known := f.tokens[in.Token]
	f.mu.Unlock()
	if !known {
		ppAnswer(w, 903, "无效的用户令牌", nil)
		return
	}
	if strings.TrimSpace(in.Content) == "" {
		ppAnswer(w, 999, "内容不能为空", nil)
		return
	}
	if in.Template == "" {
		in.Template = "html"
	}
	switch in.Template {
	case "html", "txt", "json", "markdown", "cloudMonitor", "jenkins", "route", "pay":
	default:
		ppAnswer(w, 999, "模板类型错误", nil)
		return
	}
	m := PushPlusMessage{Token: in.Token, Title: in.Title, Content: in.Content, Template: in.Template, Topic: in.Topic, Serial: strings.ToLower(randomAlnum(32))}
	f.mu.Lock()
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	ppAnswer(w, 200, "请求成功", m.Serial)
}
