package bench

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Platform is the benchmark's fake Telegram Bot API server on loopback:
// lean, so that it costs the machine little beside the server under test.
// It checks what the Telegram provider sends as the real API does (the
// bot token in the path, the method, chat_id and text or photo present)
// and answers in the Bot API's shapes, after Latency when set. It counts
// deliveries and refusals without keeping the messages, so its memory
// stays flat however long the run. Like the load's connections, it speaks
// HTTP/1.1 itself (keep-alive, bodies framed by Content-Length or chunked
// coding) instead of through net/http, whose per-request work would take
// a good part of the cores the server under test shares.
type Platform struct {
	ln      net.Listener
	tokens  map[string]bool // read-only once serving
	latency time.Duration

	conns connSet
	wg    sync.WaitGroup

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
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *Platform) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.conns.add(c) {
			_ = c.Close()
			return
		}
		// (Close's Wait cannot end before this Add: accept is counted
		// until it returns.)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve answers the requests of one connection in turn.
func (p *Platform) serve(c net.Conn) {
	defer func() {
		p.conns.remove(c)
		_ = c.Close()
		p.wg.Done()
	}()
	r := bufio.NewReaderSize(c, 16<<10)
	w := bufio.NewWriterSize(c, 4<<10)
	var body bytes.Buffer
	for {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute)) // idle connections end
		line, err := readLine(r)
		if err != nil {
			return
		}
		// A copy: line lives in the reader's buffer, which reading the
		// header may move.
		method, rest, ok1 := strings.Cut(string(line), " ")
		path, proto, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || !strings.HasPrefix(proto, "HTTP/1.") || len(proto) != 8 {
			p.write(w, http.StatusBadRequest, []byte("malformed request line"), false)
			return
		}
		h, err := readHeader(r, proto[7] == '1')
		if err != nil {
			p.write(w, http.StatusBadRequest, []byte(err.Error()), false)
			return
		}
		if h.expect {
			_, _ = w.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
			if w.Flush() != nil {
				return
			}
		}
		body.Reset()
		switch {
		case h.chunked:
			err = readChunked(r, &body)
		case h.length > 1<<20:
			p.write(w, http.StatusRequestEntityTooLarge, []byte("Request Entity Too Large"), false)
			return
		case h.length > 0:
			_, err = io.CopyN(&body, r, h.length)
		}
		if err != nil {
			return
		}
		status, answer := p.answer(method, path, h.contentType, body.Bytes())
		if !p.write(w, status, answer, h.keep) || !h.keep {
			return
		}
	}
}

// write sends one answer; it reports whether the connection is still good.
func (p *Platform) write(w *bufio.Writer, status int, body []byte, keep bool) bool {
	var b []byte
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	if !keep {
		b = append(b, "\r\nConnection: close"...)
	}
	b = append(b, "\r\n\r\n"...)
	_, _ = w.Write(b)
	_, _ = w.Write(body)
	return w.Flush() == nil
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

// Close stops the server and ends its connections.
func (p *Platform) Close() error {
	err := p.ln.Close()
	p.conns.end(func(c net.Conn) { _ = c.Close() })
	p.wg.Wait()
	return err
}

// sendBody is the part of sendMessage and sendPhoto bodies that is checked.
type sendBody struct {
	ChatID    json.RawMessage `json:"chat_id"`
	Text      string          `json:"text"`
	Photo     string          `json:"photo"`
	ParseMode string          `json:"parse_mode"`
}

// answer checks one request as the Bot API does and returns the answer's
// status and body, after the platform's latency when it accepts.
func (p *Platform) answer(method, path, contentType string, data []byte) (int, []byte) {
	token, op, ok := strings.Cut(strings.TrimPrefix(path, "/bot"), "/")
	if !ok || !strings.HasPrefix(path, "/bot") {
		return p.fail(http.StatusNotFound, "Not Found")
	}
	if !p.tokens[token] {
		return p.fail(http.StatusUnauthorized, "Unauthorized")
	}
	if method != http.MethodPost || !strings.HasPrefix(contentType, "application/json") {
		return p.fail(http.StatusBadRequest, "Bad Request: expected a JSON POST")
	}
	var body sendBody
	if err := json.Unmarshal(data, &body); err != nil {
		return p.fail(http.StatusBadRequest, "Bad Request: can't parse JSON")
	}
	chat := string(bytes.Trim(body.ChatID, `"`))
	switch {
	case chat == "" || chat == "null":
		return p.fail(http.StatusBadRequest, "Bad Request: chat_id is empty")
	case op == "sendMessage" && body.Text == "":
		return p.fail(http.StatusBadRequest, "Bad Request: message text is empty")
	case op == "sendMessage" && body.ParseMode != "" && body.ParseMode != "HTML" && body.ParseMode != "MarkdownV2":
		return p.fail(http.StatusBadRequest, "Bad Request: unsupported parse_mode")
	case op == "sendPhoto" && body.Photo == "":
		return p.fail(http.StatusBadRequest, "Bad Request: there is no photo in the request")
	case op != "sendMessage" && op != "sendPhoto":
		return p.fail(http.StatusNotFound, "Not Found: method not found")
	}
	if p.latency > 0 {
		time.Sleep(p.latency)
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
	return http.StatusOK, b
}

// fail is the Bot API's error shape.
func (p *Platform) fail(status int, description string) (int, []byte) {
	p.refused.Add(1)
	b, _ := json.Marshal(map[string]any{"ok": false, "error_code": status, "description": description})
	return status, b
}
