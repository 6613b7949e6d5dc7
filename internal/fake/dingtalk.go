package fake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DingTalk is a fake DingTalk custom-robot webhook on loopback. It takes
// POST /robot/send?access_token=… as DingTalk does: the access token
// (300001 "token is not exist"), the robot's security settings — 加签
// (timestamp within an hour of its clock, else 310000 "invalid timestamp";
// sign = base64(HMAC-SHA256(secret, timestamp+"\n"+secret)), else 310000
// "sign not match"), custom keywords (310000 "keywords not in content")
// and an IP allow-list (310000 "ip … not in whitelist") —, the text and
// markdown bodies with their required fields, a 20000-byte text limit and
// 20 messages a minute per robot (130101 "send too fast", then throttled
// for ten minutes). Every answer is HTTP 200 {"errcode","errmsg"}. The
// codes for malformed bodies and the length limit are assumptions.
type DingTalk struct {
	simpleServer

	robots   map[string]*dingRobot
	skew     time.Duration
	messages []DingTalkMessage
}

// DingTalkSecurity is a robot's security settings.
type DingTalkSecurity struct {
	Sign     bool     // 加签: the robot has a secret
	Keywords []string // custom keywords
	AllowIPs []string // IP allow-list
}

type dingRobot struct {
	sec            DingTalkSecurity
	secret         string
	sent           []time.Time
	throttledUntil time.Time
}

// DingTalkMessage is one message a robot posted.
type DingTalkMessage struct {
	Token   string
	MsgType string
	Content string // text
	Title   string // markdown
	Text    string // markdown
	Signed  bool
}

// NewDingTalk starts a fake DingTalk webhook, closed when the test ends.
func NewDingTalk(tb testing.TB) *DingTalk {
	f := &DingTalk{robots: make(map[string]*dingRobot)}
	f.start(tb, f.serve)
	return f
}

// NewRobot adds a robot with the security settings and returns its access
// token and, with Sign, its secret.
func (f *DingTalk) NewRobot(sec DingTalkSecurity) (token, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	token = strings.ToLower(randomAlnum(64))
	r := &dingRobot{sec: sec}
	if sec.Sign {
		r.secret = "SEC" + strings.ToLower(randomAlnum(64))
	}
	f.robots[token] = r
	return token, r.secret
}

// SetClockSkew moves the fake's clock, to test the timestamp window.
func (f *DingTalk) SetClockSkew(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skew = d
}

// Messages returns the messages posted so far.
func (f *DingTalk) Messages() []DingTalkMessage { return snapshot(&f.mu, &f.messages) }

// DingTalkFault is a DingTalk refusal (HTTP 200 with a non-zero errcode).
func DingTalkFault(errcode int, errmsg string) Fault {
	return jsonFault(http.StatusOK, map[string]any{"errcode": errcode, "errmsg": errmsg})
}

func dingAnswer(w http.ResponseWriter, errcode int, errmsg string) {
	DingTalkFault(errcode, errmsg).write(w)
}

func (f *DingTalk) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/robot/send" || r.Method != http.MethodPost {
		dingAnswer(w, 404, "请求的URI地址不存在")
		return
	}
	q := r.URL.Query()
	token := q.Get("access_token")
	if token == "" {
		dingAnswer(w, 40035, "缺少参数 access_token")
		return
	}
	f.mu.Lock()
	robot, ok := f.robots[token]
	now := time.Now().Add(f.skew)
	f.mu.Unlock()
	if !ok {
		dingAnswer(w, 300001, "token is not exist")
		return
	}
	if len(robot.sec.AllowIPs) > 0 {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		if !slices.Contains(robot.sec.AllowIPs, host) {
			dingAnswer(w, 310000, "ip "+host+" not in whitelist")
			return
		}
	}
	if robot.sec.Sign {
		if q.Get("sign") == "" {
			dingAnswer(w, 310000, "sign not match")
			return
		}
		ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
		if err != nil || now.Sub(time.UnixMilli(ts)).Abs() > time.Hour {
			dingAnswer(w, 310000, "invalid timestamp")
			return
		}
		mac := hmac.New(sha256.New, []byte(robot.secret))
		mac.Write([]byte(q.Get("timestamp") + "\n" + robot.secret))
		if !hmac.Equal([]byte(q.Get("sign")), []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))) {
			dingAnswer(w, 310000, "sign not match")
			return
		}
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		dingAnswer(w, 43004, "无效的HTTP HEADER Content-Type")
		return
	}
	var in struct {
		MsgType string `json:"msgtype"`
		Text    *struct {
			Content string `json:"content"`
		} `json:"text"`
		Markdown *struct {
			Title string `json:"title"`
			Text  string `json:"text"`
		} `json:"markdown"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		dingAnswer(w, 40035, "缺少参数 json")
		return
	}
	m := DingTalkMessage{Token: token, MsgType: in.MsgType, Signed: robot.sec.Sign}
	var checked string
	switch in.MsgType {
	case "text":
		if in.Text == nil || strings.TrimSpace(in.Text.Content) == "" {
			dingAnswer(w, 40035, "缺少参数 text")
			return
		}
		m.Content, checked = in.Text.Content, in.Text.Content
	case "markdown":
		if in.Markdown == nil || strings.TrimSpace(in.Markdown.Title) == "" {
			dingAnswer(w, 40035, "缺少参数 markdown.title")
			return
		}
		if strings.TrimSpace(in.Markdown.Text) == "" {
			dingAnswer(w, 40035, "缺少参数 markdown.text")
			return
		}
		m.Title, m.Text = in.Markdown.Title, in.Markdown.Text
		checked = m.Title + "\n" + m.Text
	case "":
		dingAnswer(w, 40035, "缺少参数 msgtype")
		return
	default:
		dingAnswer(w, 400105, "不支持的消息类型")
		return
	}
	if len(checked) > 20000 {
		dingAnswer(w, 460101, "message too long, exceed 20000 bytes")
		return
	}
	if len(robot.sec.Keywords) > 0 && !slices.ContainsFunc(robot.sec.Keywords, func(k string) bool { return strings.Contains(checked, k) }) {
		dingAnswer(w, 310000, "keywords not in content")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Before(robot.throttledUntil) {
		dingAnswer(w, 130101, "send too fast, exceed 20 times per minute")
		return
	}
	robot.sent = recent(robot.sent, now, time.Minute)
	if len(robot.sent) >= 20 {
		robot.throttledUntil = now.Add(10 * time.Minute)
		dingAnswer(w, 130101, "send too fast, exceed 20 times per minute")
		return
	}
	robot.sent = append(robot.sent, now)
	f.messages = append(f.messages, m)
	dingAnswer(w, 0, "ok")
}
