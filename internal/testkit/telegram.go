package testkit

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Telegram is a fake Telegram Bot API server on loopback. It checks
// requests as the real one does — the token in the path, known chats,
// required fields, parse_mode HTML with Telegram's tag set, the 4096 and
// 1024 character limits — and answers in the Bot API's shapes. Switches
// make it fail, slow down, block, or drop the connection after reading a
// request.
type Telegram struct {
	srv *httptest.Server

	mu        sync.Mutex
	tokens    map[string]int64
	chats     map[string]bool
	nextID    map[string]int64
	messages  []TelegramMessage
	faults    []TelegramFault
	delay     time.Duration
	drops     int
	gate      chan struct{} // while non-nil, requests wait for it to close
	requests  int
	abandoned int // requests whose client went away while they waited
	arrived   chan struct{}
	nextBotID int64
}

// TelegramMessage is one message the fake accepted.
type TelegramMessage struct {
	Token     string
	Method    string // sendMessage or sendPhoto
	ChatID    string
	Text      string // the text, or the photo's caption
	ParseMode string
	Photo     string
	MessageID int64
	At        time.Time
}

// TelegramFault is a scripted Bot API error answer.
type TelegramFault struct {
	Status      int
	Description string
	RetryAfter  int // seconds, for 429
}

// NewTelegram starts a fake Bot API server, closed when the test ends.
func NewTelegram(tb testing.TB) *Telegram {
	f := &Telegram{
		tokens:    make(map[string]int64),
		chats:     make(map[string]bool),
		nextID:    make(map[string]int64),
		arrived:   make(chan struct{}, 1024),
		nextBotID: 7000000000,
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	if tb != nil {
		tb.Cleanup(f.Close)
	}
	return f
}

// URL is the fake's base URL, to use as a bot's api_base.
func (f *Telegram) URL() string { return f.srv.URL }

// Close stops the server; blocked requests are released.
func (f *Telegram) Close() {
	f.Unblock()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// NewBot registers a bot and returns its token.
func (f *Telegram) NewBot() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextBotID++
	token := fmt.Sprintf("%d:%s", f.nextBotID, randomSecret(35))
	f.tokens[token] = f.nextBotID
	return token
}

// AddChat makes a chat id (or @username) known, as if a user had started
// the bot or the bot had joined the group.
func (f *Telegram) AddChat(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chats[id] = true
}

// Messages returns the messages accepted so far.
func (f *Telegram) Messages() []TelegramMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TelegramMessage(nil), f.messages...)
}

// Requests returns how many send requests arrived, answered or not.
func (f *Telegram) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// Abandoned returns how many requests were dropped unanswered because
// their client went away while they were blocked or delayed.
func (f *Telegram) Abandoned() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.abandoned
}

// Arrived receives a value each time a send request arrives.
func (f *Telegram) Arrived() <-chan struct{} { return f.arrived }

// Fail makes the next requests answer the faults, one each, in order.
func (f *Telegram) Fail(faults ...TelegramFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, faults...)
}

// SetDelay makes every answer wait d.
func (f *Telegram) SetDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// DropNext makes the next n requests be read whole and then have their
// connection closed without an answer.
func (f *Telegram) DropNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drops += n
}

// Block makes requests wait, after they are read, until Unblock.
func (f *Telegram) Block() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate == nil {
		f.gate = make(chan struct{})
	}
}

// Unblock releases blocked requests.
func (f *Telegram) Unblock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

func randomSecret(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

type tgAnswer struct {
	OK          bool           `json:"ok"`
	Result      any            `json:"result,omitempty"`
	ErrorCode   int            `json:"error_code,omitempty"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

func tgWrite(w http.ResponseWriter, status int, a tgAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}

func tgError(w http.ResponseWriter, status int, desc string) {
	tgWrite(w, status, tgAnswer{OK: false, ErrorCode: status, Description: desc})
}

// params reads the Bot API's parameters from the query string and from a
// JSON, urlencoded or multipart body, as the real server does.
func tgParams(r *http.Request) (map[string]string, error) {
	p := make(map[string]string)
	for k, v := range r.URL.Query() {
		p[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var m map[string]any
		dec := json.NewDecoder(r.Body)
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, tgErrorf("Bad Request: can't parse JSON object")
		}
		for k, v := range m {
			switch v := v.(type) {
			case string:
				p[k] = v
			case json.Number:
				p[k] = v.String()
			case bool:
				p[k] = strconv.FormatBool(v)
			default:
				b, _ := json.Marshal(v)
				p[k] = string(b)
			}
		}
	case "application/x-www-form-urlencoded", "multipart/form-data":
		if err := r.ParseMultipartForm(10 << 20); err != nil && err != http.ErrNotMultipart {
			return nil, tgErrorf("Bad Request: can't parse request body")
		}
		for k, v := range r.PostForm {
			p[k] = v[0]
		}
	default:
		_, _ = io.Copy(io.Discard, r.Body)
	}
	return p, nil
}

func (f *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		tgError(w, http.StatusNotFound, "Not Found")
		return
	}
	params, perr := tgParams(r)
	f.mu.Lock()
	_, known := f.tokens[token]
	if method == "sendMessage" || method == "sendPhoto" {
		f.requests++
		select {
		case f.arrived <- struct{}{}:
		default:
		}
	}
	gate, delay := f.gate, f.delay
	drop := false
	if f.drops > 0 {
		f.drops--
		drop = true
	}
	var fault *TelegramFault
	if !drop && len(f.faults) > 0 {
		fault = &f.faults[0]
		f.faults = f.faults[1:]
	}
	f.mu.Unlock()

	abandon := func() {
		f.mu.Lock()
		f.abandoned++
		f.mu.Unlock()
	}
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			abandon()
			return
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			abandon()
			return
		}
	}
	if drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if !known {
		tgError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if fault != nil {
		a := tgAnswer{OK: false, ErrorCode: fault.Status, Description: fault.Description}
		if fault.RetryAfter > 0 {
			a.Parameters = map[string]any{"retry_after": fault.RetryAfter}
		}
		tgWrite(w, fault.Status, a)
		return
	}
	if perr != nil {
		tgError(w, http.StatusBadRequest, perr.Error())
		return
	}
	switch method {
	case "sendMessage":
		f.sendMessage(w, token, params)
	case "sendPhoto":
		f.sendPhoto(w, token, params)
	case "getMe":
		tgWrite(w, http.StatusOK, tgAnswer{OK: true, Result: map[string]any{"id": f.tokens[token], "is_bot": true, "first_name": "Herald test bot"}})
	default:
		tgError(w, http.StatusNotFound, "Not Found")
	}
}

func (f *Telegram) checkChat(w http.ResponseWriter, p map[string]string) (string, bool) {
	chat := p["chat_id"]
	if chat == "" {
		tgError(w, http.StatusBadRequest, "Bad Request: chat_id is empty")
		return "", false
	}
	f.mu.Lock()
	known := f.chats[chat]
	f.mu.Unlock()
	if !known {
		tgError(w, http.StatusBadRequest, "Bad Request: chat not found")
		return "", false
	}
	return chat, true
}

// checkText validates a text or caption in its parse mode and returns its
// length as Telegram counts it.
func checkText(text, parseMode string) (int, string) {
	switch parseMode {
	case "":
		return utf16Units(text), ""
	case "HTML":
		plain, err := ParseTelegramHTML(text)
		if err != nil {
			return 0, "Bad Request: can't parse entities: " + err.Error()
		}
		return utf16Units(plain), ""
	case "MarkdownV2", "Markdown":
		return utf16Units(text), ""
	}
	return 0, "Bad Request: unsupported parse_mode"
}

func (f *Telegram) sendMessage(w http.ResponseWriter, token string, p map[string]string) {
	chat, ok := f.checkChat(w, p)
	if !ok {
		return
	}
	text := p["text"]
	n, bad := checkText(text, p["parse_mode"])
	switch {
	case bad != "":
		tgError(w, http.StatusBadRequest, bad)
		return
	case strings.TrimSpace(text) == "" || n == 0:
		tgError(w, http.StatusBadRequest, "Bad Request: message text is empty")
		return
	case n > 4096:
		tgError(w, http.StatusBadRequest, "Bad Request: message is too long")
		return
	}
	f.accept(w, TelegramMessage{Token: token, Method: "sendMessage", ChatID: chat, Text: text, ParseMode: p["parse_mode"]})
}

func (f *Telegram) sendPhoto(w http.ResponseWriter, token string, p map[string]string) {
	chat, ok := f.checkChat(w, p)
	if !ok {
		return
	}
	photo := p["photo"]
	if photo == "" {
		tgError(w, http.StatusBadRequest, "Bad Request: there is no photo in the request")
		return
	}
	if u, err := url.Parse(photo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		tgError(w, http.StatusBadRequest, "Bad Request: wrong HTTP URL specified")
		return
	}
	caption := p["caption"]
	n, bad := checkText(caption, p["parse_mode"])
	switch {
	case bad != "":
		tgError(w, http.StatusBadRequest, bad)
		return
	case n > 1024:
		tgError(w, http.StatusBadRequest, "Bad Request: message caption is too long")
		return
	}
	f.accept(w, TelegramMessage{Token: token, Method: "sendPhoto", ChatID: chat, Text: caption, ParseMode: p["parse_mode"], Photo: photo})
}

func (f *Telegram) accept(w http.ResponseWriter, m TelegramMessage) {
	f.mu.Lock()
	f.nextID[m.ChatID]++
	m.MessageID = f.nextID[m.ChatID]
	m.At = time.Now()
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	chatType := "private"
	if strings.HasPrefix(m.ChatID, "-") || strings.HasPrefix(m.ChatID, "@") {
		chatType = "supergroup"
	}
	result := map[string]any{
		"message_id": m.MessageID,
		"date":       m.At.Unix(),
		"chat":       map[string]any{"id": m.ChatID, "type": chatType},
	}
	if m.Method == "sendPhoto" {
		result["photo"] = []map[string]any{{"file_id": "AgAC" + randomSecret(20), "width": 640, "height": 480}}
		if m.Text != "" {
			result["caption"] = m.Text
		}
	} else {
		result["text"] = m.Text
	}
	tgWrite(w, http.StatusOK, tgAnswer{OK: true, Result: result})
}

func utf16Units(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
