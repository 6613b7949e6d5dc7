package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Platform is the benchmark's fake Telegram Bot API server on loopback:
// lean, so that it costs the machine little beside the server under test.
// It checks what the Telegram provider sends as the real API does (the
// bot token in the path, the method, chat_id and text or photo present)
// and answers in the Bot API's shapes, after Latency when set. It counts
// deliveries and refusals without keeping the messages, so its memory
// stays flat however long the run.
type Platform struct {
	srv     *http.Server
	ln      net.Listener
	tokens  map[string]bool // read-only once serving
	latency time.Duration

	delivered atomic.Int64
	refused   atomic.Int64
	nextID    atomic.Int64
}

// NewPlatform starts a fake Bot API on 127.0.0.1 for the given bot tokens
// that answers after latency.
func NewPlatform(latency time.Duration, tokens ...string) (*Platform, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Platform{ln: ln, latency: latency, tokens: make(map[string]bool)}
	for _, t := range tokens {
		p.tokens[t] = true
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// NewToken returns a bot token of Telegram's form: digits, a colon and 35
// URL-safe characters.
func NewToken() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	b := make([]byte, 35)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "7000000001:" + string(b)
}

// URL is the base URL to give bots as their api_base.
func (p *Platform) URL() string { return "http://" + p.ln.Addr().String() }

// Delivered returns the number of messages accepted so far.
func (p *Platform) Delivered() int64 { return p.delivered.Load() }

// Refused returns the number of requests answered with an error.
func (p *Platform) Refused() int64 { return p.refused.Load() }

// Close stops the server.
func (p *Platform) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil {
		return p.srv.Close()
	}
	return nil
}

// sendBody is the part of sendMessage and sendPhoto bodies that is checked.
type sendBody struct {
	ChatID    json.RawMessage `json:"chat_id"`
	Text      string          `json:"text"`
	Photo     string          `json:"photo"`
	ParseMode string          `json:"parse_mode"`
}

// ServeHTTP implements http.Handler.
func (p *Platform) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/bot"), "/")
	if !ok || !strings.HasPrefix(r.URL.Path, "/bot") {
		p.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	if !p.tokens[token] {
		p.fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		p.fail(w, http.StatusBadRequest, "Bad Request: expected a JSON POST")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	var body sendBody
	if err := json.Unmarshal(data, &body); err != nil {
		p.fail(w, http.StatusBadRequest, "Bad Request: can't parse JSON")
		return
	}
	chat := string(bytes.Trim(body.ChatID, `"`))
	switch {
	case chat == "" || chat == "null":
		p.fail(w, http.StatusBadRequest, "Bad Request: chat_id is empty")
		return
	case method == "sendMessage" && body.Text == "":
		p.fail(w, http.StatusBadRequest, "Bad Request: message text is empty")
		return
	case method == "sendMessage" && body.ParseMode != "" && body.ParseMode != "HTML" && body.ParseMode != "MarkdownV2":
		p.fail(w, http.StatusBadRequest, "Bad Request: unsupported parse_mode")
		return
	case method == "sendPhoto" && body.Photo == "":
		p.fail(w, http.StatusBadRequest, "Bad Request: there is no photo in the request")
		return
	case method != "sendMessage" && method != "sendPhoto":
		p.fail(w, http.StatusNotFound, "Not Found: method not found")
		return
	}
	if p.latency > 0 {
		t := time.NewTimer(p.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	id := p.nextID.Add(1)
	p.delivered.Add(1)
	var b []byte
	b = append(b, `{"ok":true,"result":{"message_id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"date":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = append(b, `,"chat":{"id":`...)
	b = append(b, body.ChatID...)
	b = append(b, `}}}`...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// fail answers with the Bot API's error shape.
func (p *Platform) fail(w http.ResponseWriter, status int, description string) {
	p.refused.Add(1)
	b, _ := json.Marshal(map[string]any{"ok": false, "error_code": status, "description": description})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
