package fake

import (
	"bytes"
	"cmp"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WeCom is a fake WeCom (企业微信) API server on loopback. It checks
// requests as the real one does: access tokens from /cgi-bin/gettoken per
// (corpid, corpsecret) with a lifetime (the same token is returned while it
// is valid), ?access_token= on every call, the agentid of the token's app,
// known members and application group chats, message bodies by msgtype,
// media uploads as multipart "media", the duplicate check, and the group
// robot webhook with its base64 + MD5 images. It answers HTTP 200 with
// WeCom's errcode/errmsg shapes. Text longer than 2048 bytes is cut off, as
// WeCom does. Switches make it fail with a code, delay, expire tokens, and
// drop the connection after reading a request (before or after acting on
// it).
type WeCom struct {
	opQueues[WeComFault]
	tokenBook

	corps      map[string]*wecomCorp
	robots     map[string]bool
	media      map[string]WeComUpload
	dups       map[string]wecomDup // duplicate-check key → first delivery
	messages   []WeComMessage
	uploads    []WeComUpload
	suppressed int
	seq        int
	pushes     []WeComPush
}

type wecomCorp struct {
	id         string
	apps       map[int64]string // agentid → secret
	users      map[string]string
	chats      map[string]bool
	tokenByApp map[int64]string
	servers    map[int64]*wxServer // each app's callback settings
	lastCreate int64               // the CreateTime of the last callback
	nextMsgID  int64
}

type wecomDup struct {
	msgID string
	at    time.Time
}

// WeComApp is an application registered with the fake.
type WeComApp struct {
	CorpID  string
	Secret  string
	AgentID int64
}

// Config returns a bot config for the app on the fake server.
func (a WeComApp) Config(f *WeCom) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"corp_id": a.CorpID, "corp_secret": a.Secret, "agent_id": a.AgentID, "api_base": f.URL()})
	return b
}

// WeComMessage is one message the fake delivered.
type WeComMessage struct {
	Via      string // "app" (message/send), "appchat" or "robot"
	CorpID   string
	AgentID  int64
	ToUser   string
	ChatID   string
	RobotKey string
	MsgType  string
	Content  string // text or markdown content (as delivered: cut to 2048 bytes)
	MediaID  string
	Image    []byte // the image's bytes (uploaded media or robot base64)
	Articles []WeComArticle
	// DuplicateCheck and DuplicateInterval are the request's settings.
	DuplicateCheck    int
	DuplicateInterval int
	MsgID             string
	At                time.Time
}

// WeComArticle is a news card.
type WeComArticle struct {
	Title  string `json:"title"`
	Desc   string `json:"description"`
	URL    string `json:"url"`
	PicURL string `json:"picurl"`
}

// WeComUpload is one uploaded media file.
type WeComUpload struct {
	CorpID      string
	MediaID     string
	Filename    string
	FileLength  string // the filelength parameter of the part, as sent
	ContentType string
	Data        []byte
}

// WeCom operations, for Fail and Requests.
const (
	WeComOpToken  = "token"
	WeComOpUpload = "upload"
	WeComOpSend   = "send" // message/send, appchat/send and webhook/send
)

// WeComFault is a scripted answer to the next request of one operation.
type WeComFault struct {
	ErrCode int    // answer this errcode (with ErrMsg) in an HTTP 200
	ErrMsg  string // default: a text naming the code
	// Status answers this HTTP status with Body instead (e.g. 502 from a
	// gateway).
	Status int
	Body   string
	// Drop closes the connection without an answer once the request is
	// read; with Process, after the fake acted on it (delivered).
	Drop    bool
	Process bool
	// Delay waits this long before answering.
	Delay time.Duration
	// InvalidUser answers errcode 0 listing the recipient in invaliduser
	// without delivering (a member outside the app's visible range, as
	// some real answers show).
	InvalidUser bool
}

// NewWeCom starts a fake WeCom server, closed when the test ends.
func NewWeCom(tb testing.TB) *WeCom {
	f := &WeCom{
		tokenBook: tokenBook{lifespan: 7200 * time.Second},
		corps:     make(map[string]*wecomCorp),
		robots:    make(map[string]bool),
		media:     make(map[string]WeComUpload),
		dups:      make(map[string]wecomDup),
	}
	f.serve(tb, WeComOpSend, true, f.handle)
	return f
}

// NewApp registers a corp with one application and returns it.
func (f *WeCom) NewApp() WeComApp {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	a := WeComApp{CorpID: fmt.Sprintf("ww%016x", 0xc0ffee00+f.seq), Secret: randomSecret(43), AgentID: int64(1000000 + f.seq)}
	f.corps[a.CorpID] = &wecomCorp{id: a.CorpID, apps: map[int64]string{a.AgentID: a.Secret},
		users: make(map[string]string), chats: make(map[string]bool), tokenByApp: make(map[int64]string), servers: make(map[int64]*wxServer)}
	return a
}

// NewRobot registers a group robot and returns its webhook key.
func (f *WeCom) NewRobot() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	key := fmt.Sprintf("%08x-%04x-4bc4-97a0-%012x", 0x693a91f6+f.seq, f.seq, 0x0ec2f1fa5aaa+f.seq)
	f.robots[key] = true
	return key
}

// RobotConfig returns a bot config for a robot on the fake server.
func (f *WeCom) RobotConfig(key string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"mode": "robot", "webhook_key": key, "api_base": f.URL()})
	return b
}

// Member states.
const (
	WeComActive     = "active"
	WeComUnlicensed = "unlicensed" // no interface license: listed in unlicenseduser
)

// AddUser makes a member known in the corp, active or unlicensed.
func (f *WeCom) AddUser(corpID, userID, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corps[corpID].users[strings.ToLower(userID)] = state
}

// AddChat makes an application group chat known (as if created with
// appchat/create).
func (f *WeCom) AddChat(corpID, chatID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corps[corpID].chats[chatID] = true
}

// TokenFetches returns how many tokens were asked for (answered or not).
func (f *WeCom) TokenFetches() int {
	return f.requestsTo(WeComOpToken)
}

// Fail makes the next requests of op answer the faults, one each.
func (f *WeCom) Fail(op string, faults ...WeComFault) { f.enqueue(op, 0, faults...) }

// Messages returns the messages delivered so far.
func (f *WeCom) Messages() []WeComMessage { return snapshot(&f.mu, &f.messages) }

// Uploads returns the media uploaded so far.
func (f *WeCom) Uploads() []WeComUpload { return snapshot(&f.mu, &f.uploads) }

// Suppressed returns how many sends the duplicate check swallowed.
func (f *WeCom) Suppressed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.suppressed
}

func wecomWrite(w http.ResponseWriter, v map[string]any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

// wecomErr answers an errcode in WeCom's errmsg format.
func wecomErr(w http.ResponseWriter, code int, text string) {
	wecomWrite(w, map[string]any{"errcode": code, "errmsg": fmt.Sprintf(
		"%s, hint: [%d_%s], from ip: 127.0.0.1, more info at https://open.work.weixin.qq.com/devtool/query?e=%d",
		text, time.Now().Unix(), randomSecret(6), code)})
}

func wecomOp(path string) string {
	switch path {
	case "/cgi-bin/gettoken":
		return WeComOpToken
	case "/cgi-bin/media/upload":
		return WeComOpUpload
	case "/cgi-bin/message/send", "/cgi-bin/appchat/send", "/cgi-bin/webhook/send":
		return WeComOpSend
	}
	return ""
}

func (f *WeCom) handle(w http.ResponseWriter, r *http.Request) {
	op := wecomOp(r.URL.Path)
	if op == "" {
		http.NotFound(w, r)
		return
	}
	// Read the whole request first, as a server does before acting.
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return
	}
	c := f.take(op)
	fault, delay := c.fault, c.delay
	if fault != nil && fault.Delay > 0 {
		delay = fault.Delay
	}
	if !f.wait(r, c.gate, delay) {
		return
	}
	if c.drop {
		dropConnection(w)
		return
	}
	if fault != nil && !fault.Process {
		switch {
		case fault.Drop:
			dropConnection(w)
			return
		case fault.Status != 0:
			w.WriteHeader(fault.Status)
			_, _ = io.WriteString(w, fault.Body)
			return
		case fault.ErrCode != 0:
			wecomErr(w, fault.ErrCode, cmp.Or(fault.ErrMsg, fmt.Sprintf("scripted error %d", fault.ErrCode)))
			return
		}
	}
	if fault != nil && fault.Drop { // with Process: act, then drop the answer
		f.act(httptest.NewRecorder(), r, body, fault)
		dropConnection(w)
		return
	}
	f.act(w, r, body, fault)
}

// act handles a request by its path.
func (f *WeCom) act(w http.ResponseWriter, r *http.Request, body []byte, fault *WeComFault) {
	switch r.URL.Path {
	case "/cgi-bin/gettoken":
		f.getToken(w, r)
	case "/cgi-bin/media/upload":
		f.upload(w, r, body)
	case "/cgi-bin/message/send":
		f.appSend(w, r, body, fault)
	case "/cgi-bin/appchat/send":
		f.appchatSend(w, r, body)
	case "/cgi-bin/webhook/send":
		f.webhookSend(w, r, body)
	}
}

func (f *WeCom) getToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		wecomErr(w, 43001, "require GET method")
		return
	}
	q := r.URL.Query()
	corpID, secret := q.Get("corpid"), q.Get("corpsecret")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case corpID == "":
		wecomErr(w, 41002, "corpid missing")
		return
	case secret == "":
		wecomErr(w, 41004, "corpsecret missing")
		return
	}
	corp := f.corps[corpID]
	if corp == nil {
		wecomErr(w, 40013, "invalid corpid")
		return
	}
	var agentID int64
	for id, s := range corp.apps {
		if s == secret {
			agentID = id
		}
	}
	if agentID == 0 {
		wecomErr(w, 40001, "invalid credential")
		return
	}
	// Within its validity the same token is returned, with the time left.
	tok := corp.tokenByApp[agentID]
	if t, state := f.check(tok); state == tokenLive {
		wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok", "access_token": tok, "expires_in": int(time.Until(t.expires).Seconds())})
		return
	}
	tok = randomSecret(64)
	f.issue(tok, corpID, agentID)
	corp.tokenByApp[agentID] = tok
	wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok", "access_token": tok, "expires_in": int(f.ttl().Seconds())})
}

// auth checks ?access_token= and returns its app.
func (f *WeCom) auth(w http.ResponseWriter, r *http.Request) (issuedToken, bool) {
	t, state := f.check(r.URL.Query().Get("access_token"))
	switch state {
	case tokenMissing:
		wecomErr(w, 41001, "access_token missing")
	case tokenUnknown:
		wecomErr(w, 40014, "invalid access_token")
	case tokenExpired:
		wecomErr(w, 42001, "access_token expired")
	default:
		return t, true
	}
	return t, false
}

func (f *WeCom) upload(w http.ResponseWriter, r *http.Request, body []byte) {
	app, ok := f.auth(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodPost {
		wecomErr(w, 43002, "require POST method")
		return
	}
	if typ := r.URL.Query().Get("type"); typ != "image" {
		wecomErr(w, 40004, "invalid media type")
		return
	}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" || params["boundary"] == "" {
		wecomErr(w, 41005, "media data missing")
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var up *WeComUpload
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			wecomErr(w, 41005, "media data missing")
			return
		}
		if part.FormName() != "media" {
			continue
		}
		data, _ := io.ReadAll(part)
		_, dp, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		up = &WeComUpload{CorpID: app.owner, Filename: part.FileName(), FileLength: dp["filelength"],
			ContentType: part.Header.Get("Content-Type"), Data: data}
	}
	switch {
	case up == nil:
		wecomErr(w, 41005, "media data missing")
		return
	case up.Filename == "":
		wecomErr(w, 40005, "invalid file type")
		return
	case len(up.Data) < 5 || len(up.Data) > 10<<20:
		wecomErr(w, 40009, "invalid image size")
		return
	}
	if sniffed := http.DetectContentType(up.Data); sniffed != "image/png" && sniffed != "image/jpeg" {
		wecomErr(w, 40005, "invalid file type")
		return
	}
	f.mu.Lock()
	f.seq++
	up.MediaID = fmt.Sprintf("3a8asd892asd8asd%s%d", randomSecret(20), f.seq)
	f.media[up.MediaID] = *up
	f.uploads = append(f.uploads, *up)
	f.mu.Unlock()
	wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "", "type": "image", "media_id": up.MediaID,
		"created_at": strconv.FormatInt(time.Now().Unix(), 10)})
}

// wecomBody is a message body of message/send, appchat/send or
// webhook/send.
type wecomBody struct {
	ToUser  string          `json:"touser"`
	ToParty string          `json:"toparty"`
	ToTag   string          `json:"totag"`
	ChatID  string          `json:"chatid"`
	AgentID json.RawMessage `json:"agentid"`
	MsgType string          `json:"msgtype"`
	Text    *struct {
		Content string `json:"content"`
	} `json:"text"`
	Markdown *struct {
		Content string `json:"content"`
	} `json:"markdown"`
	Image *struct {
		MediaID string `json:"media_id"`
		Base64  string `json:"base64"`
		MD5     string `json:"md5"`
	} `json:"image"`
	News *struct {
		Articles []WeComArticle `json:"articles"`
	} `json:"news"`
	EnableDuplicateCheck   int `json:"enable_duplicate_check"`
	DuplicateCheckInterval int `json:"duplicate_check_interval"`
}

// content checks the body of msgtype and fills m; it answers the error
// itself and returns false on a bad body. textMax is the cut-off of text
// and markdown.
func (f *WeCom) content(w http.ResponseWriter, b wecomBody, m *WeComMessage, corp string, textMax, mdMax int) bool {
	m.MsgType = b.MsgType
	switch b.MsgType {
	case "text":
		if b.Text == nil || strings.TrimSpace(b.Text.Content) == "" {
			wecomErr(w, 44004, "empty content")
			return false
		}
		m.Content = cutUTF8(b.Text.Content, textMax)
	case "markdown":
		if b.Markdown == nil || strings.TrimSpace(b.Markdown.Content) == "" {
			wecomErr(w, 44004, "empty content")
			return false
		}
		if mdMax > 0 && len(b.Markdown.Content) > mdMax {
			wecomErr(w, 40058, fmt.Sprintf("markdown.content exceed max length %d", mdMax))
			return false
		}
		if mdMax == 0 {
			mdMax = textMax
		}
		m.Content = cutUTF8(b.Markdown.Content, mdMax)
	case "image":
		if b.Image == nil || b.Image.MediaID == "" {
			wecomErr(w, 40007, "invalid media_id")
			return false
		}
		f.mu.Lock()
		up, ok := f.media[b.Image.MediaID]
		f.mu.Unlock()
		if !ok || up.CorpID != corp {
			wecomErr(w, 40007, "invalid media_id")
			return false
		}
		m.MediaID, m.Image = b.Image.MediaID, up.Data
	case "news":
		if b.News == nil || len(b.News.Articles) == 0 || len(b.News.Articles) > 8 {
			wecomErr(w, 40058, "news.articles size must be in [1, 8]")
			return false
		}
		for _, a := range b.News.Articles {
			if a.Title == "" || len(a.Title) > 128 {
				wecomErr(w, 40058, "invalid news article title")
				return false
			}
		}
		m.Articles = b.News.Articles
	default:
		wecomErr(w, 40008, "invalid message type")
		return false
	}
	return true
}

// cutUTF8 cuts s to at most n bytes without splitting a character, as
// WeCom silently does with long text.
func cutUTF8(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (f *WeCom) decode(w http.ResponseWriter, r *http.Request, body []byte) (wecomBody, bool) {
	var b wecomBody
	if r.Method != http.MethodPost {
		wecomErr(w, 43002, "require POST method")
		return b, false
	}
	if err := json.Unmarshal(body, &b); err != nil {
		wecomErr(w, 47001, "data format error")
		return b, false
	}
	return b, true
}

func (f *WeCom) deliver(m WeComMessage) WeComMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	if m.Via == "app" {
		m.MsgID = fmt.Sprintf("pN3x%sEA%d", randomSecret(24), f.seq)
	}
	m.At = time.Now()
	f.messages = append(f.messages, m)
	return m
}

func (f *WeCom) appSend(w http.ResponseWriter, r *http.Request, body []byte, fault *WeComFault) {
	app, ok := f.auth(w, r)
	if !ok {
		return
	}
	b, ok := f.decode(w, r, body)
	if !ok {
		return
	}
	agentID, err := strconv.ParseInt(strings.Trim(string(b.AgentID), `"`), 10, 64)
	if err != nil || agentID != app.agentID {
		wecomErr(w, 40056, "invalid agentid")
		return
	}
	m := WeComMessage{Via: "app", CorpID: app.owner, AgentID: agentID, ToUser: b.ToUser,
		DuplicateCheck: b.EnableDuplicateCheck, DuplicateInterval: b.DuplicateCheckInterval}
	if !f.content(w, b, &m, app.owner, 2048, 0) {
		return
	}
	if b.ToUser == "" && b.ToParty == "" && b.ToTag == "" {
		wecomErr(w, 40035, "invalid parameter: touser, toparty and totag are all empty")
		return
	}
	if b.EnableDuplicateCheck == 1 && (b.DuplicateCheckInterval < 0 || b.DuplicateCheckInterval > 14400) {
		wecomErr(w, 40058, "invalid duplicate_check_interval")
		return
	}
	var valid, invalid, unlicensed []string
	f.mu.Lock()
	corp := f.corps[app.owner]
	for _, u := range strings.Split(b.ToUser, "|") {
		switch corp.users[strings.ToLower(u)] {
		case WeComActive:
			valid = append(valid, u)
		case WeComUnlicensed:
			unlicensed = append(unlicensed, u)
		default:
			invalid = append(invalid, u)
		}
	}
	f.mu.Unlock()
	if fault != nil && fault.InvalidUser {
		invalid = append(invalid, valid...)
		wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok", "invaliduser": strings.Join(invalid, "|"), "msgid": "pN3x" + randomSecret(24)})
		return
	}
	if len(valid) == 0 && len(unlicensed) == 0 {
		wecomErr(w, 81013, "user & party & tag all invalid")
		return
	}
	// The duplicate check: an identical request within the interval is
	// not delivered again; the answer carries the first message's id.
	if b.EnableDuplicateCheck == 1 {
		interval := b.DuplicateCheckInterval
		if interval == 0 {
			interval = 1800
		}
		sum := md5.Sum(body)
		key := app.owner + ":" + hex.EncodeToString(sum[:])
		f.mu.Lock()
		d, seen := f.dups[key]
		if seen && time.Since(d.at) < time.Duration(interval)*time.Second {
			f.suppressed++
			f.mu.Unlock()
			wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok", "invaliduser": strings.Join(invalid, "|"), "msgid": d.msgID})
			return
		}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.dups[key] = wecomDup{msgID: m.MsgID, at: time.Now()}
			f.mu.Unlock()
		}()
	}
	ans := map[string]any{"errcode": 0, "errmsg": "ok", "invaliduser": strings.Join(invalid, "|"), "invalidparty": "", "invalidtag": "",
		"unlicenseduser": strings.Join(unlicensed, "|")}
	if len(valid) > 0 {
		m.ToUser = strings.Join(valid, "|")
		m = f.deliver(m)
		ans["msgid"] = m.MsgID
	}
	wecomWrite(w, ans)
}

func (f *WeCom) appchatSend(w http.ResponseWriter, r *http.Request, body []byte) {
	app, ok := f.auth(w, r)
	if !ok {
		return
	}
	b, ok := f.decode(w, r, body)
	if !ok {
		return
	}
	m := WeComMessage{Via: "appchat", CorpID: app.owner, ChatID: b.ChatID}
	if b.ChatID == "" {
		wecomErr(w, 40050, "chatid missing")
		return
	}
	f.mu.Lock()
	known := f.corps[app.owner].chats[b.ChatID]
	f.mu.Unlock()
	if !known {
		wecomErr(w, 86003, "chatid not exist")
		return
	}
	if !f.content(w, b, &m, app.owner, 2048, 0) {
		return
	}
	f.deliver(m)
	wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok"})
}

func (f *WeCom) webhookSend(w http.ResponseWriter, r *http.Request, body []byte) {
	key := r.URL.Query().Get("key")
	f.mu.Lock()
	known := f.robots[key]
	f.mu.Unlock()
	if !known {
		wecomErr(w, 93000, "invalid webhook url")
		return
	}
	b, ok := f.decode(w, r, body)
	if !ok {
		return
	}
	m := WeComMessage{Via: "robot", RobotKey: key, MsgType: b.MsgType}
	switch b.MsgType {
	case "text":
		if b.Text != nil && len(b.Text.Content) > 2048 {
			wecomErr(w, 40058, "text.content exceed max length 2048")
			return
		}
	case "image":
		if b.Image == nil || b.Image.Base64 == "" || b.Image.MD5 == "" {
			wecomErr(w, 40058, "image.base64 and image.md5 are required")
			return
		}
		data, err := base64.StdEncoding.DecodeString(b.Image.Base64)
		if err != nil {
			wecomErr(w, 40058, "invalid image.base64")
			return
		}
		sum := md5.Sum(data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), b.Image.MD5) {
			wecomErr(w, 301019, "media md5 not match")
			return
		}
		if len(data) > 2<<20 {
			wecomErr(w, 40009, "invalid image size")
			return
		}
		if ct := http.DetectContentType(data); ct != "image/png" && ct != "image/jpeg" {
			wecomErr(w, 40005, "invalid file type")
			return
		}
		f.deliver(WeComMessage{Via: "robot", RobotKey: key, MsgType: "image", Image: data})
		wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok"})
		return
	case "news":
		if b.News != nil {
			for _, a := range b.News.Articles {
				if a.URL == "" {
					wecomErr(w, 40058, "news.articles.url is required")
					return
				}
			}
		}
	}
	if !f.content(w, b, &m, "", 2048, 4096) {
		return
	}
	f.deliver(m)
	wecomWrite(w, map[string]any{"errcode": 0, "errmsg": "ok"})
}
