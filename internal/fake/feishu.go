package fake

import (
	"bytes"
	"cmp"
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

// Feishu is a fake Feishu/Lark open platform on loopback. It checks
// requests as the real one does: tenant access tokens per app with a
// lifetime (the same token while at least 30 minutes remain, scaled down
// for short lifetimes), Authorization: Bearer on every call, the
// receive_id_type and the receiver (users in the app's availability,
// chats the bot is in), the JSON-string content of each msg_type (text,
// image, interactive card, post), body size limits, image uploads as
// multipart image_type + image, and the uuid: a request with a uuid seen
// in the last hour delivers nothing and answers the original message. It
// answers in Feishu's shapes ({"code","msg","data"} or
// {"code","msg","error"} with HTTP 400). Switches make it fail with a
// code, rate-limit with x-ogw-ratelimit-reset, delay, expire tokens, and
// drop the connection after reading a request (before or after acting on
// it).
type Feishu struct {
	opQueues[FeishuFault]
	tokenBook

	apps      map[string]*feishuApp
	receivers map[string]bool // "open_id:ou_…" etc.
	chats     map[string]bool // chat_id → the bot is a member
	images    map[string]FeishuUpload
	uuids     map[string]feishuSent // app_id + uuid → the message it delivered
	messages  []FeishuMessage
	uploads   []FeishuUpload
	deduped   int
	seq       int
	subs      map[string]*feishuSub // how each app receives its events
	tickets   map[string]string     // long-connection ticket → app id
	pingSecs  int
}

type feishuApp struct {
	secret string
	token  string
	// The app's encryption strategy, for its request URL.
	verificationToken, encryptKey string
}

type feishuSent struct {
	msg FeishuMessage
	at  time.Time
}

// FeishuApp is an app registered with the fake.
type FeishuApp struct {
	AppID     string
	AppSecret string
	// VerificationToken and EncryptKey are the app's encryption strategy
	// ("" EncryptKey: events are posted in plain JSON).
	VerificationToken string
	EncryptKey        string
}

// Config returns a bot config for the app on the fake server.
func (a FeishuApp) Config(f *Feishu) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"app_id": a.AppID, "app_secret": a.AppSecret, "api_base": f.URL()})
	return b
}

// FeishuMessage is one message the fake delivered.
type FeishuMessage struct {
	AppID         string
	ReceiveIDType string
	ReceiveID     string
	MsgType       string
	Content       string // the JSON string as sent
	UUID          string
	MessageID     string
	// Decoded content: the text of a text message or of a post's caption,
	// the markdown of a card's markdown elements, the image of an image
	// message or post.
	Text     string
	Markdown string
	ImageKey string
	Image    []byte
	At       time.Time
}

// FeishuUpload is one uploaded image.
type FeishuUpload struct {
	AppID       string
	ImageKey    string
	ImageType   string
	Filename    string
	ContentType string
	Data        []byte
}

// Feishu operations, for Fail and Requests.
const (
	FeishuOpToken  = "token"
	FeishuOpUpload = "upload"
	FeishuOpSend   = "send"
	// FeishuOpEndpoint is the long connection's endpoint call, and
	// FeishuOpConnect its WebSocket.
	FeishuOpEndpoint = "endpoint"
	FeishuOpConnect  = "connect"
)

// FeishuFault is a scripted answer to the next request of one operation.
type FeishuFault struct {
	// Status and Code answer {"code": Code, "msg": Msg} with HTTP Status
	// (default 400).
	Status int
	Code   int
	Msg    string
	// RetryAfter sets x-ogw-ratelimit-reset (seconds).
	RetryAfter int
	// Body answers this raw body with Status instead (e.g. a gateway page).
	Body string
	// Drop closes the connection without an answer once the request is
	// read; with Process, after the fake acted on it (delivered).
	Drop    bool
	Process bool
	// Delay waits this long before answering (after acting on it when
	// Process is set).
	Delay time.Duration
}

// NewFeishu starts a fake Feishu server, closed when the test ends.
func NewFeishu(tb testing.TB) *Feishu {
	f := &Feishu{
		tokenBook: tokenBook{lifespan: 7200 * time.Second},
		apps:      make(map[string]*feishuApp),
		receivers: make(map[string]bool),
		chats:     make(map[string]bool),
		images:    make(map[string]FeishuUpload),
		uuids:     make(map[string]feishuSent),
	}
	f.serve(tb, FeishuOpSend, true, f.handle)
	if tb != nil {
		tb.Cleanup(f.closeConns)
	}
	return f
}

// NewApp registers an app and returns its credentials; its events are
// posted in plain JSON with its verification token.
func (f *Feishu) NewApp() FeishuApp { return f.newApp(false) }

// NewEncryptedApp registers an app whose encryption strategy has an
// Encrypt Key: its events are encrypted and signed.
func (f *Feishu) NewEncryptedApp() FeishuApp { return f.newApp(true) }

func (f *Feishu) newApp(encrypted bool) FeishuApp {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	a := FeishuApp{AppID: fmt.Sprintf("cli_a%015x", 0x5e1f00+f.seq), AppSecret: randomSecret(32), VerificationToken: randomAlnum(32)}
	if encrypted {
		a.EncryptKey = randomAlnum(32)
	}
	f.apps[a.AppID] = &feishuApp{secret: a.AppSecret, verificationToken: a.VerificationToken, encryptKey: a.EncryptKey}
	return a
}

// AddUser makes a user reachable (in the app's availability) under an id
// type: open_id, user_id, union_id or email.
func (f *Feishu) AddUser(idType, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.receivers[idType+":"+id] = true
}

// AddChat makes a chat known; member says whether the bot is in it.
func (f *Feishu) AddChat(chatID string, member bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chats[chatID] = member
}

// TokenFetches returns how many tokens were asked for.
func (f *Feishu) TokenFetches() int {
	return f.requestsTo(FeishuOpToken)
}

// Fail makes the next requests of op answer the faults, one each.
func (f *Feishu) Fail(op string, faults ...FeishuFault) { f.enqueue(op, 0, faults...) }

// Messages returns the messages delivered so far.
func (f *Feishu) Messages() []FeishuMessage { return snapshot(&f.mu, &f.messages) }

// Uploads returns the images uploaded so far.
func (f *Feishu) Uploads() []FeishuUpload { return snapshot(&f.mu, &f.uploads) }

// Deduplicated returns how many sends repeated a uuid and delivered
// nothing.
func (f *Feishu) Deduplicated() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deduped
}

func feishuWrite(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// feishuErr answers an error in Feishu's shape.
func feishuErr(w http.ResponseWriter, status, code int, msg string) {
	feishuWrite(w, status, map[string]any{"code": code, "msg": msg, "error": map[string]any{
		"log_id":         time.Now().Format("20060102150405") + strings.ToUpper(randomSecret(16)),
		"troubleshooter": fmt.Sprintf("排查建议查看(Troubleshooting suggestions): https://open.feishu.cn/search?code=%d", code),
	}})
}

func feishuFieldErr(w http.ResponseWriter, field, desc string) {
	feishuWrite(w, http.StatusBadRequest, map[string]any{"code": 99992402, "msg": "field validation failed",
		"error": map[string]any{"field_violations": []map[string]string{{"field": field, "description": desc}}}})
}

func feishuOp(path string) string {
	switch path {
	case "/open-apis/auth/v3/tenant_access_token/internal":
		return FeishuOpToken
	case "/open-apis/im/v1/images":
		return FeishuOpUpload
	case "/open-apis/im/v1/messages":
		return FeishuOpSend
	case "/callback/ws/endpoint":
		return FeishuOpEndpoint
	case feishuConnPath:
		return FeishuOpConnect
	}
	return ""
}

func (f *Feishu) handle(w http.ResponseWriter, r *http.Request) {
	op := feishuOp(r.URL.Path)
	if op == "" {
		feishuWrite(w, http.StatusNotFound, map[string]any{"code": 404, "msg": "404 page not found"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return
	}
	c := f.take(op)
	fault, delay := c.fault, c.delay
	if fault != nil && fault.Delay > 0 {
		delay = fault.Delay
	}
	if !f.wait(r, c.gate, 0) {
		return
	}
	if c.drop {
		dropConnection(w)
		return
	}
	if fault == nil || !fault.Process {
		if !f.wait(r, nil, delay) {
			return
		}
		if fault != nil && fault.answers() {
			writeFeishuFault(w, fault)
			return
		}
		f.act(op, w, r, body)
		return
	}
	// Act, then wait and answer (or drop) as scripted.
	rec := httptest.NewRecorder()
	f.act(op, rec, r, body)
	if !f.wait(r, nil, delay) {
		return
	}
	if fault.answers() {
		writeFeishuFault(w, fault)
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// act handles a request of op.
func (f *Feishu) act(op string, w http.ResponseWriter, r *http.Request, body []byte) {
	switch op {
	case FeishuOpToken:
		f.token(w, r, body)
	case FeishuOpUpload:
		f.upload(w, r, body)
	case FeishuOpSend:
		f.send(w, r, body)
	case FeishuOpEndpoint:
		f.endpoint(w, r, body)
	case FeishuOpConnect:
		f.connect(w, r)
	}
}

// answers reports whether the fault replaces the answer (rather than only
// delaying it).
func (fault *FeishuFault) answers() bool {
	return fault.Drop || fault.Body != "" || fault.Code != 0 || fault.Status != 0
}

// writeFeishuFault answers a scripted fault.
func writeFeishuFault(w http.ResponseWriter, fault *FeishuFault) {
	status := cmp.Or(fault.Status, http.StatusBadRequest)
	switch {
	case fault.Drop:
		dropConnection(w)
	case fault.Body != "":
		w.WriteHeader(status)
		_, _ = io.WriteString(w, fault.Body)
	default:
		if fault.RetryAfter > 0 {
			w.Header().Set("x-ogw-ratelimit-limit", "5")
			w.Header().Set("x-ogw-ratelimit-reset", strconv.Itoa(fault.RetryAfter))
		}
		feishuErr(w, status, fault.Code, cmp.Or(fault.Msg, fmt.Sprintf("scripted error %d", fault.Code)))
	}
}

func (f *Feishu) token(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	if r.Method != http.MethodPost {
		feishuErr(w, http.StatusMethodNotAllowed, 10002, "method not allowed")
		return
	}
	if err := json.Unmarshal(body, &req); err != nil || req.AppID == "" || req.AppSecret == "" {
		feishuErr(w, http.StatusBadRequest, 10003, "invalid param")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	app := f.apps[req.AppID]
	switch {
	case app == nil:
		feishuErr(w, http.StatusBadRequest, 10003, "invalid param: app_id not exist")
		return
	case app.secret != req.AppSecret:
		feishuErr(w, http.StatusBadRequest, 10014, "app secret invalid")
		return
	}
	// The same token is returned while enough of its life remains (30
	// minutes of 2 hours); then a new one, and both stay valid.
	ttl := f.ttl()
	renew := 30 * time.Minute
	if ttl/4 < renew {
		renew = ttl / 4
	}
	if t, ok := f.lookup(app.token); ok && time.Until(t.expires) >= renew {
		feishuWrite(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": app.token, "expire": int(time.Until(t.expires).Seconds())})
		return
	}
	tok := "t-g1044" + randomSecret(40)
	f.issue(tok, req.AppID, 0)
	app.token = tok
	feishuWrite(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": int(ttl.Seconds())})
}

// auth checks the bearer token and returns its app.
func (f *Feishu) auth(w http.ResponseWriter, r *http.Request) (string, bool) {
	switch t, state := f.check(authToken(r, "Bearer ")); state {
	case tokenMissing:
		feishuErr(w, http.StatusBadRequest, 99991661, "Missing access token for authorization. Please make a request with token attached.")
	case tokenLive:
		return t.owner, true
	default:
		feishuErr(w, http.StatusBadRequest, 99991663, "Invalid access token for authorization. Please make a request with token attached.")
	}
	return "", false
}

func (f *Feishu) upload(w http.ResponseWriter, r *http.Request, body []byte) {
	app, ok := f.auth(w, r)
	if !ok {
		return
	}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" || params["boundary"] == "" {
		feishuErr(w, http.StatusBadRequest, 234001, "Invalid request param.")
		return
	}
	up := FeishuUpload{AppID: app}
	var got bool
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			feishuErr(w, http.StatusBadRequest, 234001, "Invalid request param.")
			return
		}
		data, _ := io.ReadAll(part)
		switch part.FormName() {
		case "image_type":
			up.ImageType = string(data)
		case "image":
			up.Filename, up.ContentType, up.Data, got = part.FileName(), part.Header.Get("Content-Type"), data, true
		}
	}
	switch {
	case up.ImageType != "message" && up.ImageType != "avatar":
		feishuErr(w, http.StatusBadRequest, 234001, "Invalid request param.")
		return
	case !got:
		feishuErr(w, http.StatusBadRequest, 234001, "Invalid request param.")
		return
	case len(up.Data) == 0:
		feishuErr(w, http.StatusBadRequest, 234010, "File's size can't be 0.")
		return
	case len(up.Data) > 10<<20:
		feishuErr(w, http.StatusBadRequest, 234006, "The image size exceeds the limit.")
		return
	}
	switch http.DetectContentType(up.Data) {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon":
	default:
		feishuErr(w, http.StatusBadRequest, 234011, "Can't recognise image format.")
		return
	}
	f.mu.Lock()
	f.seq++
	up.ImageKey = fmt.Sprintf("img_v3_02%s_%d", strings.ToLower(randomSecret(20)), f.seq)
	f.images[up.ImageKey] = up
	f.uploads = append(f.uploads, up)
	f.mu.Unlock()
	feishuWrite(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]string{"image_key": up.ImageKey}})
}

func (f *Feishu) send(w http.ResponseWriter, r *http.Request, body []byte) {
	app, ok := f.auth(w, r)
	if !ok {
		return
	}
	idType := r.URL.Query().Get("receive_id_type")
	switch idType {
	case "open_id", "user_id", "union_id", "email", "chat_id":
	default:
		feishuFieldErr(w, "receive_id_type", "receive_id_type is required and must be one of open_id, user_id, union_id, email, chat_id")
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		feishuErr(w, http.StatusBadRequest, 9499, "Bad Request: Content-Type must be application/json")
		return
	}
	var req struct {
		ReceiveID string          `json:"receive_id"`
		MsgType   string          `json:"msg_type"`
		Content   json.RawMessage `json:"content"`
		UUID      string          `json:"uuid"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		feishuErr(w, http.StatusBadRequest, 9499, "Bad Request: invalid JSON body")
		return
	}
	var content string
	switch {
	case req.ReceiveID == "":
		feishuFieldErr(w, "receive_id", "receive_id is required")
		return
	case req.MsgType == "":
		feishuFieldErr(w, "msg_type", "msg_type is required")
		return
	case len(req.Content) == 0 || json.Unmarshal(req.Content, &content) != nil:
		// content is a JSON string holding JSON, not an object.
		feishuFieldErr(w, "content", "content is required and must be a string")
		return
	case len(req.UUID) > 50:
		feishuFieldErr(w, "uuid", "uuid length must be at most 50")
		return
	}
	m := FeishuMessage{AppID: app, ReceiveIDType: idType, ReceiveID: req.ReceiveID, MsgType: req.MsgType, Content: content, UUID: req.UUID}
	if code, msg := f.checkContent(&m); code != 0 {
		feishuErr(w, http.StatusBadRequest, code, msg)
		return
	}
	limit := 150 << 10
	if m.MsgType == "interactive" || m.MsgType == "post" {
		limit = 30 << 10
	}
	if len(body) > limit {
		feishuErr(w, http.StatusBadRequest, 230025, "The length of the message content reaches its limit.")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	chatID := ""
	if idType == "chat_id" {
		member, known := f.chats[req.ReceiveID]
		switch {
		case !known:
			feishuErr(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=invalid receive_id.")
			return
		case !member:
			feishuErr(w, http.StatusBadRequest, 230002, "Bot/User can NOT be out of the chat.")
			return
		}
		chatID = req.ReceiveID
	} else if !f.receivers[idType+":"+req.ReceiveID] {
		feishuErr(w, http.StatusBadRequest, 230013, "Bot has NO availability to this user.")
		return
	}
	if req.UUID != "" {
		if s, seen := f.uuids[app+":"+req.UUID]; seen && time.Since(s.at) < time.Hour {
			f.deduped++
			f.answerMessage(w, s.msg, chatID)
			return
		}
	}
	f.seq++
	m.MessageID = fmt.Sprintf("om_%s%d", strings.ToLower(randomSecret(28)), f.seq)
	m.At = time.Now()
	f.messages = append(f.messages, m)
	if req.UUID != "" {
		f.uuids[app+":"+req.UUID] = feishuSent{msg: m, at: m.At}
	}
	f.answerMessage(w, m, chatID)
}

func (f *Feishu) answerMessage(w http.ResponseWriter, m FeishuMessage, chatID string) {
	if chatID == "" {
		chatID = "oc_p2p" + strings.ToLower(randomSecret(20))
	}
	ms := strconv.FormatInt(m.At.UnixMilli(), 10)
	feishuWrite(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{
		"message_id": m.MessageID, "root_id": "", "parent_id": "", "msg_type": m.MsgType,
		"create_time": ms, "update_time": ms, "deleted": false, "updated": false, "chat_id": chatID,
		"sender": map[string]string{"id": m.AppID, "id_type": "app_id", "sender_type": "app", "tenant_key": "736588c9260f175d"},
		"body":   map[string]string{"content": m.Content},
	}})
}

// checkContent checks the content JSON of the msg_type and decodes it
// into m. It returns Feishu's code and text for a bad content.
func (f *Feishu) checkContent(m *FeishuMessage) (int, string) {
	const invalid = 230001
	bad := func(what string) (int, string) {
		return invalid, "Your request contains an invalid request parameter, ext=" + what
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal([]byte(m.Content), &c); err != nil {
		return bad("invalid content: not a JSON object")
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(c[k], &s)
		return s
	}
	switch m.MsgType {
	case "text":
		if m.Text = str("text"); strings.TrimSpace(m.Text) == "" {
			return bad("text content is empty")
		}
	case "image":
		m.ImageKey = str("image_key")
		img, ok := f.image(m.AppID, m.ImageKey)
		if !ok {
			return bad("invalid image_key")
		}
		m.Image = img
	case "interactive":
		var card struct {
			Schema string `json:"schema"`
			Body   struct {
				Elements []map[string]any `json:"elements"`
			} `json:"body"`
			Elements []map[string]any `json:"elements"`
		}
		if err := json.Unmarshal([]byte(m.Content), &card); err != nil {
			return 230099, "Failed to create card content, ext=invalid card JSON"
		}
		elements := card.Elements
		if card.Schema == "2.0" {
			elements = card.Body.Elements
		}
		if len(elements) == 0 {
			return 230099, "Failed to create card content, ext=card has no elements"
		}
		var md []string
		for _, e := range elements {
			tag, _ := e["tag"].(string)
			switch tag {
			case "markdown":
				s, ok := e["content"].(string)
				if !ok {
					return 230099, "Failed to create card content, ext=markdown element without content"
				}
				md = append(md, s)
			case "":
				return 230099, "Failed to create card content, ext=element without tag"
			}
		}
		m.Markdown = strings.Join(md, "\n")
	case "post":
		var langs map[string]struct {
			Title   string             `json:"title"`
			Content [][]map[string]any `json:"content"`
		}
		if err := json.Unmarshal([]byte(m.Content), &langs); err != nil || len(langs) == 0 {
			return bad("invalid post content")
		}
		for lang, post := range langs {
			switch lang {
			case "zh_cn", "en_us", "ja_jp":
			default:
				return bad("invalid post language " + lang)
			}
			var texts []string
			for _, line := range post.Content {
				for _, el := range line {
					switch el["tag"] {
					case "text", "md":
						s, _ := el["text"].(string)
						texts = append(texts, s)
					case "img":
						key, _ := el["image_key"].(string)
						img, ok := f.image(m.AppID, key)
						if !ok {
							return bad("invalid image_key")
						}
						m.ImageKey, m.Image = key, img
					case "a", "at":
					default:
						return bad(fmt.Sprintf("invalid post tag %v", el["tag"]))
					}
				}
			}
			m.Text = strings.Join(texts, "\n")
		}
	default:
		return bad("invalid msg_type " + m.MsgType)
	}
	return 0, ""
}

func (f *Feishu) image(app, key string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	up, ok := f.images[key]
	return up.Data, ok && up.AppID == app
}
