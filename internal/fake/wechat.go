package fake

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"
)

// WeChat is a fake WeChat Official Account API on loopback. It checks
// requests as the real one does: /cgi-bin/token (GET, a new token on
// every call, the previous one valid five more minutes) and
// /cgi-bin/stable_token (POST JSON, the same token until it expires) with
// WeChat's error codes; ?access_token= on every call (41001 missing, 40001
// invalid or replaced, 42001 expired); customer-service messages to
// followers within 48 hours of their last message (45015), text of at most
// 2048 bytes (45002), images by a media_id this account uploaded; uploads
// as multipart field "media" with a PNG, JPEG or GIF file. Like the real
// service it does not decode \u escapes in message JSON: they arrive
// literally. Every answer is HTTP 200 with {"errcode","errmsg"}. Switches
// make it fail with given codes, slow down (the upload and send
// endpoints, not the token endpoints), block, drop the connection after
// reading a request, expire tokens and cap replies per user. Its URL is
// api_base (and token_base).
type WeChat struct {
	opQueues[WeChatFault]
	tokenBook

	apps         map[string]*wxApp
	tokenFetches int
	followers    map[string]*wxFollower // appID + "/" + openid
	replyQuota   int
	media        map[string]WeChatMedia
	messages     []WeChatMessage
	uploads      []WeChatMedia
	nextApp      int
	tickets      map[string]wxTicket
	nextMsgID    int64
	pushes       []WeChatPush
}

type wxApp struct {
	secret     string
	stable     string
	classic    string
	ghID       string     // the account's original id: ToUserName of its messages
	server     *wxServer  // its server configuration (nil: none)
	unverified bool       // may not create QR codes
	lastCreate int64      // the CreateTime of its last callback
	last       *wxInbound // its last callback, for Redeliver
}

type wxFollower struct {
	following bool
	lastMsg   time.Time
	replies   int
}

// WeChatMessage is one customer-service message the fake accepted.
type WeChatMessage struct {
	AppID   string
	ToUser  string
	MsgType string // text or image
	Content string // as WeChat would show it
	MediaID string
	Media   *WeChatMedia
	At      time.Time
}

// WeChatMedia is one temporary media upload the fake accepted.
type WeChatMedia struct {
	AppID       string
	MediaID     string
	Type        string
	Filename    string
	ContentType string // the part's declared type
	SHA256      string
	Size        int
	CreatedAt   time.Time
}

// WeChatFault is a scripted answer. On chooses the endpoint: "token"
// (both token endpoints), "upload", "qrcode" or "send" ("" means "send"). Body, when
// set, is answered raw instead of {"errcode","errmsg"}.
type WeChatFault struct {
	On      string
	Status  int // default 200
	ErrCode int
	ErrMsg  string
	Body    string
	// After lets that many requests to the endpoint pass before this
	// fault answers.
	After int
}

// NewWeChat starts a fake WeChat server, closed when the test ends.
func NewWeChat(tb testing.TB) *WeChat {
	f := &WeChat{
		apps:      make(map[string]*wxApp),
		tokenBook: tokenBook{lifespan: 7200 * time.Second},
		followers: make(map[string]*wxFollower),
		media:     make(map[string]WeChatMedia),
		tickets:   make(map[string]wxTicket),
	}
	f.serve(tb, "send", true, f.handle)
	return f
}

// NewApp registers an Official Account and returns its AppID and
// AppSecret.
func (f *WeChat) NewApp() (appID, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextApp++
	appID = fmt.Sprintf("wx%016x", 0x5eed0000+f.nextApp)
	secret = hex.EncodeToString([]byte(randomSecret(16)))
	f.apps[appID] = &wxApp{secret: secret, ghID: fmt.Sprintf("gh_%012x", 0xabc000+f.nextApp)}
	return appID, secret
}

// BotConfig is a Herald bot config for the account on this fake.
func (f *WeChat) BotConfig(appID, secret string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"app_id": appID, "app_secret": secret, "api_base": f.URL()})
	return b
}

// AddFollower makes openid follow the account, as if the user had just
// written to it.
func (f *WeChat) AddFollower(appID, openid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.followers[appID+"/"+openid] = &wxFollower{following: true, lastMsg: time.Now()}
}

// UserWrote records the follower's last message to the account at, which
// opens the 48-hour window and resets the reply count.
func (f *WeChat) UserWrote(appID, openid string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := f.followers[appID+"/"+openid]; u != nil {
		u.lastMsg, u.replies = at, 0
	}
}

// Unfollow makes the user stop following the account.
func (f *WeChat) Unfollow(appID, openid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := f.followers[appID+"/"+openid]; u != nil {
		u.following = false
	}
}

// SetReplyQuota caps the messages to a user per message of the user (0:
// no cap), answered with 45047 beyond it.
func (f *WeChat) SetReplyQuota(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replyQuota = n
}

// TokenFetches returns how many tokens the token endpoints handed out.
func (f *WeChat) TokenFetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenFetches
}

// Messages returns the messages accepted so far.
func (f *WeChat) Messages() []WeChatMessage { return snapshot(&f.mu, &f.messages) }

// Uploads returns the media uploads accepted so far.
func (f *WeChat) Uploads() []WeChatMedia { return snapshot(&f.mu, &f.uploads) }

// Fail makes the next requests to each fault's endpoint answer it.
func (f *WeChat) Fail(faults ...WeChatFault) {
	for _, q := range faults {
		f.enqueue(cmp.Or(q.On, "send"), q.After, q)
	}
}

func wxWrite(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; encoding=utf-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

func wxError(w http.ResponseWriter, code int, msg string) {
	wxWrite(w, map[string]any{"errcode": code, "errmsg": wxErrMsg(msg)})
}

// wxErrMsg is an errmsg as WeChat words it: the text and a request id.
func wxErrMsg(msg string) string { return msg + " rid: " + strings.ToLower(randomSecret(8)) }

func (f *WeChat) handle(w http.ResponseWriter, r *http.Request) {
	var on string
	switch r.URL.Path {
	case "/cgi-bin/token", "/cgi-bin/stable_token":
		on = "token"
	case "/cgi-bin/media/upload":
		on = "upload"
	case "/cgi-bin/message/custom/send":
		on = "send"
	case "/cgi-bin/qrcode/create":
		on = "qrcode"
	default:
		wxError(w, 404, "invalid url")
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 12<<20))
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
		status := cmp.Or(fault.Status, http.StatusOK)
		if fault.Body != "" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, fault.Body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"errcode": fault.ErrCode, "errmsg": wxErrMsg(fault.ErrMsg)})
		return
	}
	switch r.URL.Path {
	case "/cgi-bin/token":
		f.classicToken(w, r)
		return
	case "/cgi-bin/stable_token":
		f.stableToken(w, r, body)
		return
	}
	appID, ok := f.auth(w, r)
	if !ok {
		return
	}
	switch on {
	case "upload":
		f.upload(w, r, appID, body)
		return
	case "qrcode":
		f.qrcode(w, appID, body)
		return
	}
	f.send(w, r, appID, body)
}

func (f *WeChat) checkApp(w http.ResponseWriter, grant, appID, secret string, stable bool) *wxApp {
	app := f.apps[appID]
	switch {
	case grant != "client_credential":
		wxError(w, 40002, "invalid grant_type")
	case app == nil:
		wxError(w, 40013, "invalid appid")
	case secret != app.secret && stable:
		wxError(w, 40125, "invalid appsecret")
	case secret != app.secret:
		wxError(w, 40001, "invalid credential, access_token is invalid or not latest")
	default:
		return app
	}
	return nil
}

// mint issues a new token for the app and returns it with its lifetime.
func (f *WeChat) mint(appID string) (string, time.Time) {
	tok := randomSecret(40)
	return tok, f.issue(tok, appID, 0).expires
}

// retire lets a replaced token work for five more minutes.
func (f *WeChat) retire(tok string) { f.shorten(tok, time.Now().Add(5*time.Minute)) }

func (f *WeChat) classicToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		wxError(w, 43001, "require GET method")
		return
	}
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	app := f.checkApp(w, q.Get("grant_type"), q.Get("appid"), q.Get("secret"), false)
	if app == nil {
		return
	}
	// Every call mints a new token; the previous one keeps working for
	// five minutes.
	f.retire(app.classic)
	tok, exp := f.mint(q.Get("appid"))
	app.classic = tok
	f.tokenFetches++
	wxWrite(w, map[string]any{"access_token": tok, "expires_in": int(time.Until(exp).Round(time.Second) / time.Second)})
}

func (f *WeChat) stableToken(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost {
		wxError(w, 43002, "require POST method")
		return
	}
	var req struct {
		GrantType    string `json:"grant_type"`
		AppID        string `json:"appid"`
		Secret       string `json:"secret"`
		ForceRefresh *bool  `json:"force_refresh"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		wxError(w, 47001, "data format error")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	app := f.checkApp(w, req.GrantType, req.AppID, req.Secret, true)
	if app == nil {
		return
	}
	cur, state := f.check(app.stable)
	force := req.ForceRefresh != nil && *req.ForceRefresh
	if force || state != tokenLive {
		if force {
			f.retire(app.stable)
		}
		app.stable, cur.expires = f.mint(req.AppID)
	}
	f.tokenFetches++
	wxWrite(w, map[string]any{"access_token": app.stable, "expires_in": int(time.Until(cur.expires).Round(time.Second) / time.Second)})
}

// auth checks ?access_token= and returns its account.
func (f *WeChat) auth(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.Method != http.MethodPost {
		wxError(w, 43002, "require POST method")
		return "", false
	}
	t, state := f.check(r.URL.Query().Get("access_token"))
	switch state {
	case tokenMissing:
		wxError(w, 41001, "access_token missing")
	case tokenUnknown:
		wxError(w, 40001, "invalid credential, access_token is invalid or not latest")
	case tokenExpired:
		wxError(w, 42001, "access_token expired")
	default:
		return t.owner, true
	}
	return "", false
}

func (f *WeChat) upload(w http.ResponseWriter, r *http.Request, appID string, body []byte) {
	typ := r.URL.Query().Get("type")
	switch typ {
	case "image", "voice", "video", "thumb":
	default:
		wxError(w, 40004, "invalid media type")
		return
	}
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "multipart/form-data" {
		wxError(w, 41005, "media data missing")
		return
	}
	req := &http.Request{Header: http.Header{"Content-Type": {mime.FormatMediaType(ct, params)}}, Body: io.NopCloser(bytes.NewReader(body)), Method: http.MethodPost}
	if err := req.ParseMultipartForm(12 << 20); err != nil {
		wxError(w, 41005, "media data missing")
		return
	}
	file, hdr, err := req.FormFile("media")
	if err != nil {
		wxError(w, 41005, "media data missing")
		return
	}
	data, _ := io.ReadAll(file)
	file.Close()
	ext := strings.ToLower(path.Ext(hdr.Filename))
	sniffed := http.DetectContentType(data)
	if typ == "image" {
		okType := sniffed == "image/png" || sniffed == "image/jpeg" || sniffed == "image/gif"
		okExt := ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".gif"
		switch {
		case !okType || !okExt:
			wxError(w, 40005, "invalid file type")
			return
		case len(data) > 10<<20:
			wxError(w, 40009, "invalid image size")
			return
		}
	}
	sum := sha256.Sum256(data)
	m := WeChatMedia{AppID: appID, MediaID: randomSecret(64), Type: typ, Filename: hdr.Filename, ContentType: hdr.Header.Get("Content-Type"),
		SHA256: hex.EncodeToString(sum[:]), Size: len(data), CreatedAt: time.Now()}
	f.mu.Lock()
	f.media[m.MediaID] = m
	f.uploads = append(f.uploads, m)
	f.mu.Unlock()
	wxWrite(w, map[string]any{"type": typ, "media_id": m.MediaID, "created_at": m.CreatedAt.Unix()})
}

func (f *WeChat) send(w http.ResponseWriter, r *http.Request, appID string, body []byte) {
	// WeChat shows \u escapes as written: keep them literal.
	raw := bytes.ReplaceAll(body, []byte(`\u`), []byte(`\\u`))
	var req struct {
		ToUser  string `json:"touser"`
		MsgType string `json:"msgtype"`
		Text    *struct {
			Content string `json:"content"`
		} `json:"text"`
		Image *struct {
			MediaID string `json:"media_id"`
		} `json:"image"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		wxError(w, 47001, "data format error")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.followers[appID+"/"+req.ToUser]
	switch {
	case req.ToUser == "" || u == nil:
		wxError(w, 40003, "invalid openid")
		return
	case !u.following:
		wxError(w, 43004, "require subscribe")
		return
	}
	m := WeChatMessage{AppID: appID, ToUser: req.ToUser, MsgType: req.MsgType}
	switch req.MsgType {
	case "text":
		if req.Text == nil || req.Text.Content == "" {
			wxError(w, 44004, "empty content")
			return
		}
		if len(req.Text.Content) > 2048 {
			wxError(w, 45002, "content size out of limit")
			return
		}
		m.Content = req.Text.Content
	case "image":
		if req.Image == nil || req.Image.MediaID == "" {
			wxError(w, 40007, "invalid media_id")
			return
		}
		md, ok := f.media[req.Image.MediaID]
		if !ok || md.AppID != appID || md.Type != "image" || time.Since(md.CreatedAt) > 72*time.Hour {
			wxError(w, 40007, "invalid media_id")
			return
		}
		m.MediaID, m.Media = md.MediaID, &md
	default:
		wxError(w, 40008, "invalid message type")
		return
	}
	switch {
	case time.Since(u.lastMsg) > 48*time.Hour:
		wxError(w, 45015, "response out of time limit or subscription is canceled")
		return
	case f.replyQuota > 0 && u.replies >= f.replyQuota:
		wxError(w, 45047, "out of response count limit")
		return
	}
	u.replies++
	m.At = time.Now()
	f.messages = append(f.messages, m)
	wxWrite(w, map[string]any{"errcode": 0, "errmsg": "ok"})
}
