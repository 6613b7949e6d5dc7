package fake

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Feishu fake's events: what users do (write to the bot in a private
// chat or, mentioning it, in a group; remove the bot from a group, add it
// back) becomes a schema 2.0 event of the app. An app subscribes by long
// connection (the default: the events wait for a client of the app's long
// connection, see feishu_longconn.go) or by request URL (Subscribe), to
// which the fake posts each event as Feishu does: with X-Lark-Request-
// Timestamp and -Nonce, and with an Encrypt Key set, encrypted and signed
// (X-Lark-Signature). Setting the request URL first checks it with a
// url_verification challenge, as the developer console does. An event not
// answered (a webhook request not answered 200, a long-connection event
// not acknowledged) stays pending and is delivered again.

// FeishuChat is a chat as users' actions name it.
type FeishuChat struct {
	// Type is "p2p" (a private chat with the bot) or "group".
	Type string
	// OpenID is the user who writes (ou_…).
	OpenID string
	// ChatID is the chat's id (oc_…); a private chat gets one when empty.
	ChatID string
	// Name is a group's name.
	Name string
	// Mention makes the message mention the bot (@_user_1), as a group
	// message must to reach it.
	Mention bool
}

// feishuSub is how one app receives its events.
type feishuSub struct {
	webhook    string // the request URL; "" for the long connection
	pending    []*feishuPending
	wake       chan struct{}
	webhookLog []int
	deliveries map[string]int // event id → times delivered
	// Long-connection switches and counts.
	dropAfter int // close the next connection after sending this many events
	loseAcks  int // ignore this many acknowledgements (lost in transit)
	split     int // split each event's payload into this many frames
	pings     int
	acks      int
	conns     int // connections opened
	live      map[*feishuConn]bool
}

// feishuPending is an event not yet acknowledged.
type feishuPending struct {
	id      string
	payload []byte
	conn    *feishuConn // the connection it is in flight on
	sentAt  time.Time
}

func (f *Feishu) sub(appID string) *feishuSub {
	if f.subs == nil {
		f.subs = make(map[string]*feishuSub)
	}
	s := f.subs[appID]
	if s == nil {
		s = &feishuSub{wake: make(chan struct{}), deliveries: make(map[string]int), live: make(map[*feishuConn]bool)}
		f.subs[appID] = s
	}
	return s
}

// wakeLocked wakes the app's connections waiting for events.
func (s *feishuSub) wakeLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// Subscribe sets the app's request URL: the fake first checks it with a
// url_verification challenge (encrypted when the app has an encrypt key)
// and refuses a URL that does not answer it; then events are posted to it.
func (f *Feishu) Subscribe(app FeishuApp, url string) error {
	app = f.appInfo(app.AppID)
	challenge := randomAlnum(32)
	body, _ := json.Marshal(map[string]string{"challenge": challenge, "token": app.VerificationToken, "type": "url_verification"})
	status, answer, err := f.post(app, url, body, false)
	if err != nil {
		return err
	}
	var got struct {
		Challenge string `json:"challenge"`
	}
	if status != http.StatusOK || json.Unmarshal(answer, &got) != nil || got.Challenge != challenge {
		return fmt.Errorf("the request URL did not answer the challenge: HTTP %d %s", status, answer)
	}
	f.mu.Lock()
	f.sub(app.AppID).webhook = url
	f.mu.Unlock()
	go f.pushPending(app)
	return nil
}

// post sends a body to an app's request URL as Feishu does: encrypted
// with the app's encrypt key when it has one, with the timestamp and
// nonce headers, and signed (except the URL check).
func (f *Feishu) post(app FeishuApp, url string, plain []byte, sign bool) (int, []byte, error) {
	body := plain
	if app.EncryptKey != "" {
		body, _ = json.Marshal(map[string]string{"encrypt": FeishuEncrypt(app.EncryptKey, plain)})
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), randomAlnum(16)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("X-Lark-Request-Timestamp", ts)
	req.Header.Set("X-Lark-Request-Nonce", nonce)
	if sign && app.EncryptKey != "" {
		req.Header.Set("X-Lark-Signature", FeishuSign(ts, nonce, app.EncryptKey, body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), nil
}

// FeishuSign is X-Lark-Signature: hex(sha256(timestamp + nonce + encrypt
// key + body)).
func FeishuSign(timestamp, nonce, encryptKey string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(timestamp + nonce + encryptKey))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// FeishuEncrypt encrypts an event as Feishu does: AES-256-CBC under
// sha256(encrypt key), PKCS#7 padding, a random IV before the ciphertext,
// base64.
func FeishuEncrypt(encryptKey string, plain []byte) string {
	key := sha256.Sum256([]byte(encryptKey))
	block, _ := aes.NewCipher(key[:])
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	data := append(append([]byte{}, plain...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, aes.BlockSize+len(data))
	_, _ = rand.Read(out[:aes.BlockSize])
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], data)
	return base64.StdEncoding.EncodeToString(out)
}

// FeishuEvent builds a schema 2.0 event of an app as Feishu sends it, and
// returns its id.
func FeishuEvent(app FeishuApp, eventType string, event map[string]any) (string, []byte) {
	id := strings.ToLower(randomAlnum(32))
	body, _ := json.Marshal(map[string]any{"schema": "2.0",
		"header": map[string]any{"event_id": id, "event_type": eventType, "create_time": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"token": app.VerificationToken, "app_id": app.AppID, "tenant_key": "2ca1d211f64f6438"},
		"event": event})
	return id, body
}

// Write makes a user write text to the bot in chat: an
// im.message.receive_v1 event. The user becomes reachable by open_id; a
// group becomes a chat the bot is in (unless it was removed).
func (f *Feishu) Write(app FeishuApp, chat FeishuChat, text string) string {
	f.mu.Lock()
	f.receivers["open_id:"+chat.OpenID] = true
	chatID := chat.ChatID
	if chat.Type == "p2p" && chatID == "" {
		chatID = "oc_p2p" + strings.ToLower(hex.EncodeToString([]byte(chat.OpenID))[:20])
	}
	if _, known := f.chats[chatID]; !known && chat.Type != "p2p" {
		f.chats[chatID] = true
	}
	f.seq++
	msgID := fmt.Sprintf("om_%s%d", strings.ToLower(randomAlnum(28)), f.seq)
	f.mu.Unlock()
	var mentions []map[string]any
	if chat.Mention {
		text = "@_user_1 " + text
		mentions = []map[string]any{{"key": "@_user_1", "name": "Herald", "tenant_key": "2ca1d211f64f6438",
			"id": map[string]any{"open_id": "ou_bot" + strings.ToLower(app.AppID[4:]), "union_id": "", "user_id": ""}}}
	}
	ms := strconv.FormatInt(time.Now().UnixMilli(), 10)
	content, _ := json.Marshal(map[string]string{"text": text})
	msg := map[string]any{"message_id": msgID, "root_id": "", "parent_id": "", "create_time": ms, "update_time": ms,
		"chat_id": chatID, "chat_type": chat.Type, "message_type": "text", "content": string(content)}
	if mentions != nil {
		msg["mentions"] = mentions
	}
	return f.emit(app, "im.message.receive_v1", map[string]any{
		"sender": map[string]any{"sender_id": map[string]any{"open_id": chat.OpenID, "union_id": "on_" + chat.OpenID[3:], "user_id": ""},
			"sender_type": "user", "tenant_key": "2ca1d211f64f6438"},
		"message": msg,
	})
}

// RemoveBot makes a group remove the bot: im.chat.member.bot.deleted_v1,
// and sends to the chat answer 230002 until it is added back.
func (f *Feishu) RemoveBot(app FeishuApp, chatID, name string) string {
	f.AddChat(chatID, false)
	return f.emit(app, "im.chat.member.bot.deleted_v1", feishuChatEvent(chatID, name))
}

// AddBot makes a group add the bot: im.chat.member.bot.added_v1.
func (f *Feishu) AddBot(app FeishuApp, chatID, name string) string {
	f.AddChat(chatID, true)
	return f.emit(app, "im.chat.member.bot.added_v1", feishuChatEvent(chatID, name))
}

func feishuChatEvent(chatID, name string) map[string]any {
	return map[string]any{"chat_id": chatID, "name": name, "external": false, "operator_tenant_key": "2ca1d211f64f6438",
		"operator_id": map[string]any{"open_id": "ou_operator0000", "union_id": "on_operator0000", "user_id": ""}}
}

// emit queues an event for the app and delivers it: posted to the request
// URL, or pushed to a long connection.
func (f *Feishu) emit(app FeishuApp, eventType string, event map[string]any) string {
	app = f.appInfo(app.AppID)
	id, body := FeishuEvent(app, eventType, event)
	f.mu.Lock()
	s := f.sub(app.AppID)
	s.pending = append(s.pending, &feishuPending{id: id, payload: body})
	s.wakeLocked()
	hook := s.webhook != ""
	f.mu.Unlock()
	if hook {
		f.pushPending(app)
	}
	return id
}

// pushPending posts an app's pending events to its request URL, in order;
// an event not answered 200 stays pending (Feishu retries it later: call
// Redeliver).
func (f *Feishu) pushPending(app FeishuApp) {
	app = f.appInfo(app.AppID)
	f.mu.Lock()
	s := f.sub(app.AppID)
	url := s.webhook
	list := append([]*feishuPending(nil), s.pending...)
	f.mu.Unlock()
	if url == "" {
		return
	}
	for _, p := range list {
		status, _, err := f.post(app, url, p.payload, true)
		if err != nil {
			status = 0
		}
		f.mu.Lock()
		s.webhookLog = append(s.webhookLog, status)
		s.deliveries[p.id]++
		if status == http.StatusOK {
			s.removeLocked(p)
		}
		f.mu.Unlock()
	}
}

// Redeliver posts the app's pending events to its request URL again.
func (f *Feishu) Redeliver(app FeishuApp) { f.pushPending(app) }

func (s *feishuSub) removeLocked(p *feishuPending) {
	for i, q := range s.pending {
		if q == p {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// WebhookAnswers returns the HTTP statuses the app's request URL answered
// events with (0 for no answer).
func (f *Feishu) WebhookAnswers(app FeishuApp) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.sub(app.AppID).webhookLog...)
}

// Deliveries returns how many times an event was delivered.
func (f *Feishu) Deliveries(app FeishuApp, eventID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sub(app.AppID).deliveries[eventID]
}

// PendingEvents returns how many of the app's events are not yet
// acknowledged.
func (f *Feishu) PendingEvents(app FeishuApp) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sub(app.AppID).pending)
}

// appInfo returns an app's credentials and encryption strategy as the
// fake keeps them.
func (f *Feishu) appInfo(appID string) FeishuApp {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.apps[appID]
	if a == nil {
		return FeishuApp{AppID: appID}
	}
	return FeishuApp{AppID: appID, AppSecret: a.secret, VerificationToken: a.verificationToken, EncryptKey: a.encryptKey}
}
