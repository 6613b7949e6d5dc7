package fake

import (
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
)

// Telegram is a fake Telegram Bot API server on loopback. It checks
// requests as the real one does — the token in the path, known chats,
// groups upgraded to supergroups (migrate_to_chat_id), chats that blocked
// the bot, required fields, parse_mode HTML with Telegram's tag set, the
// 4096 and 1024 character limits, photos by URL (fetched, when
// FetchPhotos is on, with Telegram's 5 MB limit and its refusals) or
// uploaded as multipart — and answers in the Bot API's shapes. It records
// which entities Telegram would drop for breaking its nesting rules.
// Switches make it fail, slow down, block, drop the connection after
// reading a request, and enforce Telegram's rate limits with 429 and
// retry_after.
type Telegram struct {
	oneQueue[TelegramFault]

	tokens    map[string]int64
	chats     map[string]bool
	nextID    map[string]int64
	messages  []TelegramMessage
	nextBotID int64
	chaos     *chaos
	log       []TelegramRequest

	migrated    map[string]int64
	blocked     map[string]bool
	fetchPhotos bool
	enforce     bool
	chatSends   map[string][]time.Time
	botSends    map[string][]time.Time
	throttled   int
	bots        map[string]*tgBotState // updates and webhooks, by token
}

// TelegramRequest is one send request as the fake saw it, and what it did
// with it: "answered", "dropped" (connection closed after reading it), or
// the HTTP status of the error it answered.
type TelegramRequest struct {
	ChatID  string
	Text    string
	Outcome string
}

// TelegramMessage is one message the fake accepted.
type TelegramMessage struct {
	Token     string
	Method    string // sendMessage or sendPhoto
	ChatID    string
	Text      string // the text, or the photo's caption
	ParseMode string
	Photo     string // the photo's URL; empty for an upload
	// PhotoData is the photo's bytes: uploaded, or fetched from Photo
	// when FetchPhotos is on.
	PhotoData []byte
	// EntityProblem says what Telegram would drop or change in the
	// parse_mode HTML entities for breaking its nesting rules ("" when
	// it keeps them all).
	EntityProblem string
	MessageID     int64
	At            time.Time
}

// TelegramFault is a scripted Bot API error answer.
type TelegramFault struct {
	Status      int
	Description string
	RetryAfter  int // seconds, for 429
}

// NewTelegram starts a fake Bot API server, closed when the test ends.
// Its URL is a bot's api_base.
func NewTelegram(tb testing.TB) *Telegram {
	f := &Telegram{
		tokens:    make(map[string]int64),
		chats:     make(map[string]bool),
		nextID:    make(map[string]int64),
		nextBotID: 7000000000,
		migrated:  make(map[string]int64),
		blocked:   make(map[string]bool),
		chatSends: make(map[string][]time.Time),
		botSends:  make(map[string][]time.Time),
	}
	f.serve(tb, tgSend, false, f.handle)
	return f
}

// tgSend is the operation of sendMessage and sendPhoto, which Requests
// counts; other methods are operations of their own name.
const tgSend = "send"

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

// MigrateChat makes a group chat answer as one upgraded to a supergroup:
// sends to it fail with migrate_to_chat_id = to, and to becomes known.
func (f *Telegram) MigrateChat(id string, to int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.migrated[id] = to
	f.chats[strconv.FormatInt(to, 10)] = true
}

// BlockChat makes a chat answer as a user who blocked the bot.
func (f *Telegram) BlockChat(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked[id] = true
}

// FetchPhotos makes sendPhoto fetch photo URLs as Telegram does (by
// default the fake takes any http(s) URL without fetching it, so that
// tests may use addresses that do not resolve).
func (f *Telegram) FetchPhotos() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetchPhotos = true
}

// EnforceLimits makes the fake answer 429 with retry_after, as Telegram
// does, to a bot that sends more than one message a second to a private
// chat, 20 a minute to a group, or 30 a second in all.
func (f *Telegram) EnforceLimits() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enforce = true
}

// Throttled returns how many sends the enforced limits refused.
func (f *Telegram) Throttled() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.throttled
}

// Messages returns the messages accepted so far.
func (f *Telegram) Messages() []TelegramMessage { return snapshot(&f.mu, &f.messages) }

// Log returns every send request the fake read, in arrival order, with
// what it did with it ("answered" covers both accepted messages and the
// validation errors of the Bot API).
func (f *Telegram) Log() []TelegramRequest { return snapshot(&f.mu, &f.log) }

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
// JSON, urlencoded or multipart body, as the real server does. Uploaded
// files are returned under the name of their part.
func tgParams(r *http.Request) (map[string]string, map[string][]byte, error) {
	p := make(map[string]string)
	files := make(map[string][]byte)
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
			return nil, nil, tgErrorf("Bad Request: can't parse JSON object")
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
		if err := r.ParseMultipartForm(64 << 20); err != nil && err != http.ErrNotMultipart {
			return nil, nil, tgErrorf("Bad Request: can't parse request body")
		}
		for k, v := range r.PostForm {
			p[k] = v[0]
		}
		if r.MultipartForm != nil {
			for k, fhs := range r.MultipartForm.File {
				if fh, err := fhs[0].Open(); err == nil {
					files[k], _ = io.ReadAll(fh)
					fh.Close()
				}
			}
		}
	default:
		_, _ = io.Copy(io.Discard, r.Body)
	}
	return p, files, nil
}

func (f *Telegram) handle(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		tgError(w, http.StatusNotFound, "Not Found")
		return
	}
	params, files, perr := tgParams(r)
	op := method
	if method == "sendMessage" || method == "sendPhoto" {
		op = tgSend
	}
	f.mu.Lock()
	_, known := f.tokens[token]
	c := f.takeLocked(op)
	if f.chaos != nil && !c.drop && c.fault == nil && known {
		var extra time.Duration
		c.drop, c.fault, extra = f.chaos.pick()
		c.delay += extra
	}
	if op == tgSend {
		outcome := "answered"
		switch {
		case c.drop:
			outcome = "dropped"
		case c.fault != nil:
			outcome = strconv.Itoa(c.fault.Status)
		}
		text := params["text"]
		if method == "sendPhoto" {
			text = params["caption"]
		}
		f.log = append(f.log, TelegramRequest{ChatID: params["chat_id"], Text: text, Outcome: outcome})
	}
	f.mu.Unlock()

	if !f.wait(r, c.gate, c.delay) {
		return
	}
	if c.drop {
		dropConnection(w)
		return
	}
	if !known {
		tgError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if fault := c.fault; fault != nil {
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
		f.sendPhoto(w, token, params, files)
	case "getMe":
		f.mu.Lock()
		id := f.tokens[token]
		f.mu.Unlock()
		tgWrite(w, http.StatusOK, tgAnswer{OK: true, Result: map[string]any{"id": id, "is_bot": true, "first_name": "Herald test bot",
			"username": TelegramUsername(id)}})
	case "getUpdates":
		f.getUpdates(w, r, token, params)
	case "setWebhook":
		f.setWebhook(w, token, params)
	case "deleteWebhook":
		params["url"] = ""
		f.setWebhook(w, token, params)
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
	known, to, blocked := f.chats[chat], f.migrated[chat], f.blocked[chat]
	f.mu.Unlock()
	switch {
	case to != 0:
		tgWrite(w, http.StatusBadRequest, tgAnswer{OK: false, ErrorCode: 400,
			Description: "Bad Request: group chat was upgraded to a supergroup chat", Parameters: map[string]any{"migrate_to_chat_id": to}})
		return "", false
	case !known:
		tgError(w, http.StatusBadRequest, "Bad Request: chat not found")
		return "", false
	case blocked && !strings.HasPrefix(chat, "-"):
		tgError(w, http.StatusForbidden, "Forbidden: bot was blocked by the user")
		return "", false
	case blocked:
		tgError(w, http.StatusForbidden, "Forbidden: bot was kicked from the group chat")
		return "", false
	}
	return chat, true
}

// throttle applies Telegram's limits when they are enforced, answering
// 429 with retry_after; it records the send when it is allowed.
func (f *Telegram) throttle(w http.ResponseWriter, token, chat string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.enforce {
		return true
	}
	now := time.Now()
	chatKey := token + "/" + chat
	f.chatSends[chatKey] = recent(f.chatSends[chatKey], now, time.Minute)
	f.botSends[token] = recent(f.botSends[token], now, time.Second)
	var wait time.Duration
	cs := f.chatSends[chatKey]
	private := !strings.HasPrefix(chat, "-") && !strings.HasPrefix(chat, "@")
	switch {
	case private && len(cs) > 0 && now.Sub(cs[len(cs)-1]) < 900*time.Millisecond: // ~1 a second, small jitter allowed
		wait = time.Second - now.Sub(cs[len(cs)-1])
	case !private && len(cs) >= 20:
		wait = time.Minute - now.Sub(cs[len(cs)-20])
	case len(f.botSends[token]) >= 30:
		wait = time.Second - now.Sub(f.botSends[token][len(f.botSends[token])-30])
	}
	if wait > 0 {
		f.throttled++
		secs := int((wait + time.Second - 1) / time.Second)
		tgWrite(w, http.StatusTooManyRequests, tgAnswer{OK: false, ErrorCode: 429,
			Description: fmt.Sprintf("Too Many Requests: retry after %d", secs), Parameters: map[string]any{"retry_after": secs}})
		return false
	}
	f.chatSends[chatKey] = append(f.chatSends[chatKey], now)
	f.botSends[token] = append(f.botSends[token], now)
	return true
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
	if !f.throttle(w, token, chat) {
		return
	}
	f.accept(w, TelegramMessage{Token: token, Method: "sendMessage", ChatID: chat, Text: text, ParseMode: p["parse_mode"]})
}

func (f *Telegram) sendPhoto(w http.ResponseWriter, token string, p map[string]string, files map[string][]byte) {
	chat, ok := f.checkChat(w, p)
	if !ok {
		return
	}
	photo, upload := p["photo"], files["photo"]
	if name, ok := strings.CutPrefix(photo, "attach://"); ok {
		photo, upload = "", files[name]
	}
	var data []byte
	switch {
	case photo == "" && upload == nil:
		tgError(w, http.StatusBadRequest, "Bad Request: there is no photo in the request")
		return
	case photo == "":
		if len(upload) > 10<<20 {
			tgError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
			return
		}
		if !strings.HasPrefix(http.DetectContentType(upload), "image/") {
			tgError(w, http.StatusBadRequest, "Bad Request: IMAGE_PROCESS_FAILED")
			return
		}
		data = upload
	default:
		if u, err := url.Parse(photo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			tgError(w, http.StatusBadRequest, "Bad Request: wrong HTTP URL specified")
			return
		}
		f.mu.Lock()
		fetch := f.fetchPhotos
		f.mu.Unlock()
		if fetch {
			var bad string
			if data, bad = fetchPhoto(photo); bad != "" {
				tgError(w, http.StatusBadRequest, bad)
				return
			}
		}
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
	if !f.throttle(w, token, chat) {
		return
	}
	f.accept(w, TelegramMessage{Token: token, Method: "sendPhoto", ChatID: chat, Text: caption, ParseMode: p["parse_mode"], Photo: photo, PhotoData: data})
}

// fetchPhoto downloads a photo URL as Telegram's servers do, returning
// the Bot API's refusal when it cannot be used.
func fetchPhoto(u string) ([]byte, string) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(u)
	if err != nil {
		return nil, "Bad Request: failed to get HTTP URL content"
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "Bad Request: failed to get HTTP URL content"
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 5<<20+1))
	if err != nil || len(data) > 5<<20 {
		return nil, "Bad Request: failed to get HTTP URL content"
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "image/") || !strings.HasPrefix(http.DetectContentType(data), "image/") {
		return nil, "Bad Request: wrong type of the web page content"
	}
	return data, ""
}

// accept records a message that passed the checks, with what Telegram
// would drop from its HTML entities, and answers it.
func (f *Telegram) accept(w http.ResponseWriter, m TelegramMessage) {
	if m.ParseMode == "HTML" {
		m.EntityProblem = TelegramEntityProblem(m.Text)
	}
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

// TelegramUsername is the username of the fake's bot with the id (the
// part of a token before the colon).
func TelegramUsername(id int64) string { return "herald_test_" + strconv.FormatInt(id, 10) + "_bot" }

// BotID returns the id of a bot token (the part before the colon).
func (f *Telegram) BotID(token string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens[token]
}
