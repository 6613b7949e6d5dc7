package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/heraldpush/herald/push"
)

// The long connection: POST /callback/ws/endpoint with the app's id and
// secret answers a WebSocket URL and the client's settings (the ping
// interval…); on the WebSocket, binary protobuf frames (frame.go). The
// client pings on the server's interval (a control frame type=ping; the
// pong may carry new settings), and answers each event (a data frame
// type=event whose payload is the schema 2.0 event JSON, possibly split
// into "sum" parts by "seq") by sending the frame back with the payload
// {"code":200} once it handled it. An event not answered is pushed again,
// to this or another connection; the engine handles each event id once.

// Defaults of the server's client settings.
const (
	defaultPingInterval = 2 * time.Minute
	minPingInterval     = 100 * time.Millisecond
	// healthySession is how long a connection must have lasted for its
	// end to be met by connecting again at once rather than reported as
	// a failure (which the engine waits after, longer each time).
	healthySession = time.Minute
	// maxParts caps the parts of one split payload and partsKept how many
	// split payloads wait for their parts (each for partsTTL at most).
	maxParts  = 64
	partsKept = 32
	partsTTL  = 5 * time.Second
)

// Receive implements push.EventSource: it runs the bot's long connection
// until ctx ends, connecting again at once after a connection that lasted;
// a failure to connect, or a connection that ended soon, is returned, and
// the engine runs Receive again later.
func (p *Provider) Receive(ctx context.Context, bot push.Bot, _ string, sink push.EventSink) error {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return err
	}
	for {
		start := time.Now()
		err := p.longConn(ctx, cfg, sink)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) < healthySession {
			return err
		}
	}
}

// endpoint is the answer of /callback/ws/endpoint.
type endpoint struct {
	Code *int   `json:"code"`
	Msg  string `json:"msg"`
	Data struct {
		URL          string       `json:"URL"`
		ClientConfig clientConfig `json:"ClientConfig"`
	} `json:"data"`
}

// clientConfig is the server's settings of the client (seconds).
type clientConfig struct {
	ReconnectCount    int `json:"ReconnectCount"`
	ReconnectInterval int `json:"ReconnectInterval"`
	ReconnectNonce    int `json:"ReconnectNonce"`
	PingInterval      int `json:"PingInterval"`
}

// connectURL asks for the long connection's URL.
func (p *Provider) connectURL(ctx context.Context, c Config) (string, clientConfig, error) {
	resp, err := p.client.PostJSON(ctx, p.apiBase(c)+"/callback/ws/endpoint",
		map[string]string{"AppID": c.AppID, "AppSecret": c.AppSecret}, http.Header{"locale": {"zh"}})
	if err != nil {
		return "", clientConfig{}, fmt.Errorf("asking for the long connection's address: %w", err)
	}
	var ep endpoint
	if err := json.Unmarshal(resp.Body, &ep); err != nil || ep.Code == nil {
		return "", clientConfig{}, fmt.Errorf("asking for the long connection's address: HTTP %d without Feishu's answer (check api_base)", resp.Status)
	}
	if *ep.Code != 0 || resp.Status != http.StatusOK {
		return "", clientConfig{}, fmt.Errorf("asking for the long connection's address: Feishu answered HTTP %d, code %d: %s (check app_id, app_secret and that the app subscribes to events by long connection)",
			resp.Status, *ep.Code, truncate(ep.Msg, 200))
	}
	if ep.Data.URL == "" {
		return "", clientConfig{}, errors.New("asking for the long connection's address: the answer has no URL")
	}
	return ep.Data.URL, ep.Data.ClientConfig, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// longConn runs one long connection until it ends.
func (p *Provider) longConn(ctx context.Context, c Config, sink push.EventSink) error {
	u, cc, err := p.connectURL(ctx, c)
	if err != nil {
		return err
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "wss" && parsed.Scheme != "ws") {
		return errors.New("the long connection's address is not a WebSocket URL")
	}
	service, _ := strconv.ParseInt(parsed.Query().Get("service_id"), 10, 32)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: p.client.Transport()}})
	cancel()
	if err != nil {
		if resp != nil && resp.Header.Get("Handshake-Status") != "" {
			return fmt.Errorf("opening the long connection: Feishu refused it: status %s (%s), auth code %s", resp.Header.Get("Handshake-Status"),
				truncate(resp.Header.Get("Handshake-Msg"), 200), resp.Header.Get("Handshake-Autherrcode"))
		}
		return fmt.Errorf("opening the long connection: %w", scrubURL(err, u))
	}
	conn.SetReadLimit(maxFrame + 4096)
	s := &session{p: p, cfg: c, conn: conn, service: int32(service), sink: sink, parts: make(map[string]*split)}
	s.setPing(cc.PingInterval)
	defer conn.CloseNow()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go s.pingLoop(sctx)
	err = s.readLoop(sctx)
	if ctx.Err() == nil {
		_ = conn.Close(websocket.StatusNormalClosure, "")
	}
	return err
}

// scrubURL removes the connection URL (which carries a ticket) from an
// error's text.
func scrubURL(err error, u string) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	if u != "" && strings.Contains(err.Error(), u) {
		return errors.New("the WebSocket handshake failed")
	}
	return err
}

// session is one long connection.
type session struct {
	p       *Provider
	cfg     Config
	conn    *websocket.Conn
	service int32
	sink    push.EventSink
	ping    atomic.Int64 // the ping interval, ns
	parts   map[string]*split
}

// split is a payload whose parts are arriving.
type split struct {
	parts [][]byte
	size  int
	at    time.Time
}

func (s *session) setPing(seconds int) {
	d := defaultPingInterval
	if seconds > 0 {
		d = max(time.Duration(seconds)*time.Second, minPingInterval)
	}
	s.ping.Store(int64(d))
}

// pingLoop pings on the server's interval until ctx ends.
func (s *session) pingLoop(ctx context.Context) {
	for {
		t := time.NewTimer(time.Duration(s.ping.Load()))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		f := frame{service: s.service, method: methodControl, headers: []header{{"type", "ping"}}}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := s.conn.Write(wctx, websocket.MessageBinary, f.marshal())
		cancel()
		if err != nil {
			return // the read loop sees the connection end
		}
	}
}

// readLoop reads frames until the connection ends or an event cannot be
// handled. Silence longer than three ping intervals ends it: the server
// answers every ping.
func (s *session) readLoop(ctx context.Context) error {
	for {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Duration(s.ping.Load())+5*time.Second)
		typ, msg, err := s.conn.Read(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the long connection ended: %w", err)
		}
		if typ != websocket.MessageBinary {
			continue
		}
		f, err := unmarshalFrame(msg)
		if err != nil {
			return fmt.Errorf("the long connection: %w", err)
		}
		switch f.method {
		case methodControl:
			if f.get("type") == "pong" && len(f.payload) > 0 {
				var cc clientConfig
				if json.Unmarshal(f.payload, &cc) == nil {
					s.setPing(cc.PingInterval)
				}
			}
		case methodData:
			if err := s.data(ctx, f); err != nil {
				return err
			}
		}
	}
}

// data handles a data frame: the whole payload once its parts are in, an
// event reported, and the frame answered.
func (s *session) data(ctx context.Context, f frame) error {
	payload, whole := s.assemble(f)
	if !whole {
		return nil
	}
	code := http.StatusOK
	var handleErr error
	start := time.Now()
	if f.get("type") == "event" {
		var env envelope
		if err := json.Unmarshal(payload, &env); err == nil {
			handleErr = s.p.handle(ctx, s.cfg, env, s.sink)
		}
		if handleErr != nil {
			code = http.StatusInternalServerError
		}
	}
	ack := f
	ack.headers = append(append([]header{}, f.headers...), header{"biz_rt", strconv.FormatInt(time.Since(start).Milliseconds(), 10)})
	ack.payload = []byte(`{"code":` + strconv.Itoa(code) + `,"headers":null,"data":null}`)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.conn.Write(wctx, websocket.MessageBinary, ack.marshal()); err != nil {
		return fmt.Errorf("the long connection ended while answering an event: %w", err)
	}
	return handleErr
}

// assemble returns a frame's payload, whole: at once for a payload in one
// part, or when the last of its parts arrived.
func (s *session) assemble(f frame) ([]byte, bool) {
	sum, _ := strconv.Atoi(f.get("sum"))
	if sum <= 1 {
		return f.payload, true
	}
	seq, err := strconv.Atoi(f.get("seq"))
	id := f.get("message_id")
	if err != nil || sum > maxParts || seq < 0 || seq >= sum || id == "" {
		return nil, false
	}
	now := time.Now()
	for k, sp := range s.parts {
		if now.Sub(sp.at) > partsTTL {
			delete(s.parts, k)
		}
	}
	sp := s.parts[id]
	if sp == nil || len(sp.parts) != sum {
		if len(s.parts) >= partsKept {
			return nil, false
		}
		sp = &split{parts: make([][]byte, sum), at: now}
		s.parts[id] = sp
	}
	if sp.parts[seq] == nil {
		sp.size += len(f.payload)
	}
	sp.parts[seq] = append([]byte{}, f.payload...)
	if sp.size > maxFrame {
		delete(s.parts, id)
		return nil, false
	}
	out := make([]byte, 0, sp.size)
	for _, part := range sp.parts {
		if part == nil {
			return nil, false
		}
		out = append(out, part...)
	}
	delete(s.parts, id)
	return out, true
}
