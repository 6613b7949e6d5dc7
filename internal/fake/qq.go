package fake

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Codes the fake QQ answers with that QQ's documentation does not name
// (assumed): an unknown openid or group_openid, and an unsupported image
// format at /files.
const (
	QQCodeUnknownTarget   = 40034003
	QQCodeUnsupportedFile = 40093002
)

// QQ is a fake QQ Bot API v2 (token endpoint and OpenAPI) on loopback. It
// checks requests as the real one does: getAppAccessToken takes a JSON
// {"appId": "<string>", "clientSecret"} and answers expires_in as a
// string; every API call needs "Authorization: QQBot <token>" with a live
// token (401 and code 11244 otherwise); message bodies are checked per
// msg_type (content for text, markdown.content and no content for
// Markdown, media.file_info and a non-empty content for media); /files
// downloads the image URL itself, as QQ does, and its file_info works only
// in the scene and chat it was uploaded for. Proactive messages need a
// permission the app lacks by default (40034102), a wake-up message needs
// the user to have talked to the bot, and native Markdown needs a grant
// (50056). Switches make it fail with given codes, slow down (the API,
// not the token endpoint), block, drop the connection after reading a
// request, and expire tokens. Its URL is both token_base and api_base.
type QQ struct {
	opQueues[QQFault]
	tokenBook
	client *http.Client

	apps          map[string]*qqApp
	tokenFetches  int
	users         map[string]bool
	groups        map[string]bool
	wakeups       map[string]int
	files         map[string]QQUpload
	messages      []QQMessage
	uploads       []QQUpload
	nextApp       int64
	intTimestamps bool
	fileTTL       int

	events    map[string]*qqEvents
	inbound   map[string]*qqInbound
	clock     func() time.Time
	heartbeat time.Duration
}

type qqApp struct {
	secret    string
	current   string
	markdown  bool
	proactive bool
}

// QQMessage is one message the fake accepted.
type QQMessage struct {
	AppID    string
	Scene    string // "c2c" or "group"
	Target   string // openid or group_openid
	MsgType  int
	Content  string
	Markdown string
	Media    *QQUpload // the upload a msg_type 7 message showed
	IsWakeup bool
	// MsgID or EventID and MsgSeq: the passive reply it was.
	MsgID   string
	EventID string
	MsgSeq  int
	ID      string
	At      time.Time
}

// QQUpload is one rich-media upload the fake accepted, with the bytes it
// fetched from the URL.
type QQUpload struct {
	AppID       string
	Scene       string
	Target      string
	URL         string
	FileType    int
	SrvSendMsg  bool
	SHA256      string
	Size        int
	ContentType string
	FileInfo    string
	expires     time.Time
}

// QQFault is a scripted error answer. On chooses the endpoint it applies
// to: "token", "files" or "messages" ("" means "messages").
type QQFault struct {
	On      string
	Status  int
	Code    int
	Message string
	// HTML answers a gateway's HTML page instead of the API's JSON.
	HTML bool
}

// NewQQ starts a fake QQ server, closed when the test ends.
func NewQQ(tb testing.TB) *QQ {
	f := &QQ{
		client:    &http.Client{Timeout: 10 * time.Second},
		apps:      make(map[string]*qqApp),
		tokenBook: tokenBook{lifespan: 7200 * time.Second},
		users:     make(map[string]bool),
		groups:    make(map[string]bool),
		wakeups:   make(map[string]int),
		files:     make(map[string]QQUpload),
		nextApp:   102000000,
		fileTTL:   3600,
	}
	f.serve(tb, "messages", true, f.handle)
	return f
}

// NewApp registers a bot app (Markdown granted, no proactive permission)
// and returns its AppID and AppSecret.
func (f *QQ) NewApp() (appID, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextApp++
	appID = strconv.FormatInt(f.nextApp, 10)
	secret = randomSecret(32)
	f.apps[appID] = &qqApp{secret: secret, markdown: true}
	return appID, secret
}

// BotConfig is a Herald bot config for the app on this fake.
func (f *QQ) BotConfig(appID, secret string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"app_id": appID, "client_secret": secret, "api_base": f.URL(), "token_base": f.URL()})
	return b
}

// SetMarkdown grants or withdraws the app's native Markdown permission.
func (f *QQ) SetMarkdown(appID string, granted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apps[appID].markdown = granted
}

// SetProactive grants or withdraws the app's proactive-message
// permission (sends with neither msg_id nor is_wakeup).
func (f *QQ) SetProactive(appID string, allowed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apps[appID].proactive = allowed
}

// AddUser makes a C2C openid known.
func (f *QQ) AddUser(openid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[openid] = true
}

// AddGroup makes a group_openid known.
func (f *QQ) AddGroup(groupOpenID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[groupOpenID] = true
}

// UserTalked records that the user wrote to the bot, which allows one
// wake-up message.
func (f *QQ) UserTalked(openid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[openid] = true
	f.wakeups[openid]++
}

// SetIntTimestamps makes message answers carry timestamp as an integer
// (as documented) instead of an RFC 3339 string (as observed).
func (f *QQ) SetIntTimestamps(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intTimestamps = on
}

// TokenFetches returns how many tokens getAppAccessToken handed out,
// including repeats of a live one.
func (f *QQ) TokenFetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenFetches
}

// Messages returns the messages accepted so far.
func (f *QQ) Messages() []QQMessage { return snapshot(&f.mu, &f.messages) }

// Uploads returns the uploads accepted so far.
func (f *QQ) Uploads() []QQUpload { return snapshot(&f.mu, &f.uploads) }

// Fail makes the next requests to each fault's endpoint answer it, one
// each, in order.
func (f *QQ) Fail(faults ...QQFault) {
	for _, q := range faults {
		f.enqueue(cmp.Or(q.On, "messages"), 0, q)
	}
}

func qqWrite(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Tps-Trace-Id", randomSecret(32))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func qqError(w http.ResponseWriter, status, code int, msg string) {
	qqWrite(w, status, map[string]any{"message": msg, "code": code, "err_code": code, "trace_id": randomSecret(32)})
}

func (f *QQ) handle(w http.ResponseWriter, r *http.Request) {
	var on, scene, target string
	switch {
	case r.URL.Path == "/gateway" && r.Method == http.MethodGet:
		f.gateway(w, r)
		return
	case r.URL.Path == "/websocket":
		f.websocket(w, r)
		return
	case r.URL.Path == "/app/getAppAccessToken":
		on = "token"
	default:
		parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
		if len(parts) == 4 && parts[0] == "v2" && (parts[1] == "users" || parts[1] == "groups") && (parts[3] == "messages" || parts[3] == "files") {
			on = parts[3]
			scene = "c2c"
			if parts[1] == "groups" {
				scene = "group"
			}
			target, _ = url.PathUnescape(parts[2])
		}
	}
	if on == "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<html><body><h1>404 Not Found</h1></body></html>")
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	c := f.take(on)
	if on == "token" {
		c.delay = 0 // the delay is the API's
	}
	if !f.wait(r, c.gate, c.delay) {
		return
	}
	if c.drop {
		dropConnection(w)
		return
	}
	if fault := c.fault; fault != nil {
		if fault.HTML {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(fault.Status)
			_, _ = fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>TAPISIX</center>\r\n</body>\r\n</html>\r\n",
				fault.Status, http.StatusText(fault.Status), fault.Status, http.StatusText(fault.Status))
			return
		}
		qqError(w, fault.Status, fault.Code, fault.Message)
		return
	}
	if r.Method != http.MethodPost {
		qqError(w, http.StatusMethodNotAllowed, 405, "method not allowed")
		return
	}
	if on == "token" {
		f.token(w, r, body)
		return
	}
	appID, ok := f.auth(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	known := (scene == "c2c" && f.users[target]) || (scene == "group" && f.groups[target])
	f.mu.Unlock()
	if !known {
		qqError(w, http.StatusBadRequest, QQCodeUnknownTarget, "目标不存在")
		return
	}
	var req map[string]any
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if ct != "application/json" || dec.Decode(&req) != nil {
		qqError(w, http.StatusBadRequest, 12002, "请求体错误")
		return
	}
	if on == "files" {
		f.upload(w, appID, scene, target, req)
		return
	}
	f.message(w, appID, scene, target, req)
}

func (f *QQ) token(w http.ResponseWriter, r *http.Request, body []byte) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var req map[string]any
	if ct != "application/json" || json.Unmarshal(body, &req) != nil {
		qqWrite(w, http.StatusOK, map[string]any{"code": 100002, "message": "internal err"})
		return
	}
	appID, ok1 := req["appId"].(string)
	secret, ok2 := req["clientSecret"].(string)
	if _, present := req["appId"]; present && !ok1 {
		qqWrite(w, http.StatusOK, map[string]any{"code": 100002, "message": "internal err"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	app := f.apps[appID]
	switch {
	case !ok1 || app == nil:
		qqWrite(w, http.StatusOK, map[string]any{"code": 100007, "message": "appid invalid"})
		return
	case !ok2 || secret != app.secret:
		qqWrite(w, http.StatusOK, map[string]any{"code": 100016, "message": "invalid appid or secret"})
		return
	}
	now := time.Now()
	cur, live := f.lookup(app.current)
	// The same token until its last 60 s, then a new one; the old keeps
	// working until it expires.
	if !live || cur.expires.Sub(now) <= 60*time.Second {
		app.current = randomSecret(40)
		cur = f.issue(app.current, appID, 0)
	}
	f.tokenFetches++
	left := int(cur.expires.Sub(now).Round(time.Second) / time.Second)
	qqWrite(w, http.StatusOK, map[string]any{"access_token": app.current, "expires_in": strconv.Itoa(left)})
}

// auth checks the QQBot token and returns its app.
func (f *QQ) auth(w http.ResponseWriter, r *http.Request) (string, bool) {
	switch t, state := f.check(authToken(r, "QQBot ")); state {
	case tokenMissing:
		qqError(w, http.StatusUnauthorized, 11241, "wrong token")
	case tokenLive:
		return t.owner, true
	default:
		qqError(w, http.StatusUnauthorized, 11244, "token not exist or expire")
	}
	return "", false
}

func jsonInt(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n.String())
	return i, err == nil
}

func (f *QQ) upload(w http.ResponseWriter, appID, scene, target string, req map[string]any) {
	ft, ok := jsonInt(req["file_type"])
	if !ok || ft < 1 || ft > 4 {
		qqError(w, http.StatusBadRequest, 12002, "file_type 错误")
		return
	}
	raw, _ := req["url"].(string)
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		qqError(w, http.StatusBadRequest, 12002, "url 错误")
		return
	}
	srvSend, _ := req["srv_send_msg"].(bool)
	if v, present := req["srv_send_msg"]; present {
		if _, isBool := v.(bool); !isBool {
			qqError(w, http.StatusBadRequest, 12002, "srv_send_msg 错误")
			return
		}
	}
	// QQ downloads the resource itself.
	resp, err := f.client.Get(raw)
	if err != nil {
		qqError(w, http.StatusBadRequest, 304082, "富媒体资源拉取失败，请重试")
		return
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 30<<20))
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		qqError(w, http.StatusBadRequest, 304082, "富媒体资源拉取失败，请重试")
		return
	}
	ct := http.DetectContentType(data)
	if ft == 1 && ct != "image/png" && ct != "image/jpeg" {
		qqError(w, http.StatusBadRequest, QQCodeUnsupportedFile, "不支持的文件格式")
		return
	}
	sum := sha256.Sum256(data)
	up := QQUpload{AppID: appID, Scene: scene, Target: target, URL: raw, FileType: ft, SrvSendMsg: srvSend,
		SHA256: hex.EncodeToString(sum[:]), Size: len(data), ContentType: ct, FileInfo: randomSecret(48)}
	f.mu.Lock()
	if f.fileTTL > 0 {
		up.expires = time.Now().Add(time.Duration(f.fileTTL) * time.Second)
	}
	ttl := f.fileTTL
	f.files[up.FileInfo] = up
	f.uploads = append(f.uploads, up)
	f.mu.Unlock()
	if srvSend {
		if ok, code, msg := f.mayPush(appID, scene, target, false); !ok {
			qqError(w, http.StatusBadRequest, code, msg)
			return
		}
		id := f.record(QQMessage{AppID: appID, Scene: scene, Target: target, MsgType: 7, Media: &up})
		qqWrite(w, http.StatusOK, map[string]any{"file_uuid": randomSecret(20), "file_info": up.FileInfo, "ttl": ttl, "id": id})
		return
	}
	qqWrite(w, http.StatusOK, map[string]any{"file_uuid": randomSecret(20), "file_info": up.FileInfo, "ttl": ttl})
}

// mayPush applies the delivery policy to a message without msg_id: a
// wake-up message needs the user's recent message (and is C2C only), any
// other needs the proactive permission.
func (f *QQ) mayPush(appID, scene, target string, wakeup bool) (bool, int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case wakeup && scene != "c2c":
		return false, 12002, "请求体错误: is_wakeup 仅支持单聊"
	case wakeup && f.wakeups[target] <= 0:
		return false, 40034102, "主动消息失败, 无权限"
	case wakeup:
		f.wakeups[target]--
		return true, 0, ""
	case !f.apps[appID].proactive:
		return false, 40034102, "主动消息失败, 无权限"
	}
	return true, 0, ""
}

func (f *QQ) message(w http.ResponseWriter, appID, scene, target string, req map[string]any) {
	mt, ok := jsonInt(req["msg_type"])
	if !ok {
		qqError(w, http.StatusBadRequest, 12002, "请求体错误: msg_type")
		return
	}
	content, hasContent := req["content"].(string)
	if _, present := req["content"]; present && !hasContent {
		qqError(w, http.StatusBadRequest, 12002, "请求体错误: content")
		return
	}
	wakeup := false
	if v, present := req["is_wakeup"]; present {
		b, isBool := v.(bool)
		if !isBool {
			qqError(w, http.StatusBadRequest, 12002, "请求体错误: is_wakeup")
			return
		}
		wakeup = b
	}
	msgID, _ := req["msg_id"].(string)
	eventID, _ := req["event_id"].(string)
	seq := 1
	if v, present := req["msg_seq"]; present {
		n, ok := jsonInt(v)
		if !ok || n < 1 {
			qqError(w, http.StatusBadRequest, 12002, "请求体错误: msg_seq")
			return
		}
		seq = n
	}
	m := QQMessage{AppID: appID, Scene: scene, Target: target, MsgType: mt, Content: content, IsWakeup: wakeup, MsgID: msgID, EventID: eventID}
	if msgID != "" || eventID != "" {
		m.MsgSeq = seq
	}
	f.mu.Lock()
	markdownGranted := f.apps[appID].markdown
	f.mu.Unlock()
	switch mt {
	case 0:
		if strings.TrimSpace(content) == "" {
			qqError(w, http.StatusBadRequest, 50006, "消息为空")
			return
		}
	case 2:
		md, _ := req["markdown"].(map[string]any)
		mdContent, _ := md["content"].(string)
		_, template := md["custom_template_id"]
		switch {
		case md == nil:
			qqError(w, http.StatusBadRequest, 50041, "markdown 有空值")
			return
		case hasContent:
			qqError(w, http.StatusBadRequest, 50037, "带有markdown消息只支持 markdown 或者 keyboard 组合")
			return
		case template && mdContent != "":
			qqError(w, http.StatusBadRequest, 50057, "markdown 参数只支持原生语法或者模版二选一")
			return
		case !template && !markdownGranted:
			qqError(w, http.StatusBadRequest, 50056, "不允许发送 markdown content")
			return
		case !template && strings.TrimSpace(mdContent) == "":
			qqError(w, http.StatusBadRequest, 50041, "markdown 有空值")
			return
		}
		m.Markdown = mdContent
	case 7:
		media, _ := req["media"].(map[string]any)
		info, _ := media["file_info"].(string)
		if info == "" {
			qqError(w, http.StatusBadRequest, 12002, "请求体错误: media.file_info")
			return
		}
		if content == "" {
			qqError(w, http.StatusBadRequest, 50006, "消息为空")
			return
		}
		f.mu.Lock()
		up, known := f.files[info]
		f.mu.Unlock()
		if !known || up.AppID != appID || up.Scene != scene || up.Target != target || (!up.expires.IsZero() && time.Now().After(up.expires)) {
			qqError(w, http.StatusBadRequest, 12002, "请求体错误: file_info 无效")
			return
		}
		m.Media = &up
	case 3, 4, 6:
		qqError(w, http.StatusBadRequest, 12002, "请求体错误: 不支持的消息类型")
		return
	default:
		qqError(w, http.StatusBadRequest, 12002, "请求体错误: msg_type")
		return
	}
	if utf8.RuneCountInString(content) > 4000 || utf8.RuneCountInString(m.Markdown) > 4000 {
		qqError(w, http.StatusBadRequest, 40054007, "消息长度超限")
		return
	}
	switch {
	case wakeup && (msgID != "" || eventID != ""):
		qqError(w, http.StatusBadRequest, 12002, "请求体错误: is_wakeup 不能与 msg_id 或 event_id 同时使用")
		return
	case msgID != "" && eventID != "":
		qqError(w, http.StatusBadRequest, 12002, "请求体错误: msg_id 与 event_id 只能二选一")
		return
	case msgID != "" || eventID != "":
		if ok, code, msg := f.checkReply(appID, scene, target, msgID, eventID, seq); !ok {
			qqError(w, http.StatusBadRequest, code, msg)
			return
		}
	default:
		if ok, code, msg := f.mayPush(appID, scene, target, wakeup); !ok {
			qqError(w, http.StatusBadRequest, code, msg)
			return
		}
	}
	id := f.record(m)
	f.mu.Lock()
	intTS := f.intTimestamps
	f.mu.Unlock()
	var ts any = time.Now().Format(time.RFC3339)
	if intTS {
		ts = time.Now().Unix()
	}
	qqWrite(w, http.StatusOK, map[string]any{"id": id, "timestamp": ts})
}

func (f *QQ) record(m QQMessage) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	m.ID = "ROBOT1.0_" + randomSecret(24)
	m.At = time.Now()
	f.messages = append(f.messages, m)
	return m.ID
}
