package qq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// QQ's WebSocket gateway: GET /gateway gives its URL; the gateway says
// Hello (op 10) with the heartbeat interval; the bot identifies (op 2)
// with its access token and intents, or resumes (op 6) an earlier
// session from the last seq it handled, and the gateway replays what it
// missed; then the bot sends a heartbeat (op 1, the last seq) every
// interval, answered by op 11, and handles the dispatches (op 0) in
// order. The receiver's cursor is "<session_id> <seq>", saved after each
// event it handled, so that the next run (on this node or another)
// resumes where this one stopped and loses nothing; events the gateway
// delivers again are handled once by their id.

// intentGroupAndC2C is the intent of every event a bot listens to:
// C2C and group messages, friends, groups and their message switches.
const intentGroupAndC2C = 1 << 25

// maxFrame caps one gateway frame.
const maxFrame = 1 << 20

// helloTimeout is how long the gateway has to say Hello, and the dial to
// finish.
const helloTimeout = 20 * time.Second

// minSession is how long a session must have lasted for its drop to be
// reconnected at once rather than after the engine's backoff.
const minSession = time.Second

// gatewayCursor is where a receiver is in a gateway session.
type gatewayCursor struct {
	session string
	seq     int64
}

func parseCursor(s string) gatewayCursor {
	id, seq, ok := strings.Cut(s, " ")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || id == "" || err != nil || n < 0 {
		return gatewayCursor{}
	}
	return gatewayCursor{session: id, seq: n}
}

func (c gatewayCursor) String() string {
	if c.session == "" {
		return ""
	}
	return c.session + " " + strconv.FormatInt(c.seq, 10)
}

// decodeFrame reads one gateway frame.
func decodeFrame(b []byte) (payload, error) {
	var pl payload
	if err := json.Unmarshal(b, &pl); err != nil {
		return payload{}, fmt.Errorf("a gateway frame that is not QQ's JSON: %w", err)
	}
	if pl.S < 0 {
		return payload{}, errors.New("a gateway frame with a negative seq")
	}
	return pl, nil
}

// Receive implements push.EventSource: one gateway connection, until ctx
// ends, the gateway asks for a reconnect (nil: the engine runs it again at
// once, resuming) or it fails.
func (p *Provider) Receive(ctx context.Context, bot push.Bot, cursor string, sink push.EventSink) error {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return err
	}
	token, err := p.tokens.Get(ctx, tokenKey(cfg), p.fetchToken(cfg))
	if err != nil {
		return fmt.Errorf("the access token for the gateway: %w", err)
	}
	wsURL, err := p.gatewayURL(ctx, cfg, token)
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, helloTimeout)
	conn, _, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"User-Agent": {httpcall.UserAgent}}})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("connecting to QQ's gateway: %w", scrubURL(err, wsURL))
	}
	defer func() { _ = conn.CloseNow() }()
	conn.SetReadLimit(maxFrame)
	g := &gatewayRun{p: p, cfg: cfg, token: token, conn: conn, sink: sink, cur: parseCursor(cursor)}
	err = g.run(ctx)
	if ctx.Err() != nil {
		_ = conn.Close(websocket.StatusNormalClosure, "")
		return nil
	}
	return err
}

// scrubURL keeps a gateway URL (which could carry a credential) out of an
// error.
func scrubURL(err error, u string) error {
	if u == "" || !strings.Contains(err.Error(), u) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), u, "<gateway>"))
}

// gatewayURL asks QQ for the gateway's URL.
func (p *Provider) gatewayURL(ctx context.Context, cfg Config, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.apiBase()+"/gateway", nil)
	if err != nil {
		return "", err
	}
	req.Header = p.header(cfg, token)
	resp, err := p.client.Do(ctx, req)
	if err != nil {
		return "", fmt.Errorf("GET /gateway: %w", err)
	}
	var ans struct {
		URL     string `json:"url"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil || resp.Status != http.StatusOK || ans.URL == "" {
		if resp.Status == http.StatusUnauthorized || tokenCode(ans.Code) {
			p.tokens.Invalidate(tokenKey(cfg), token)
		}
		return "", fmt.Errorf("GET /gateway: HTTP %d, code %d %s: no gateway URL", resp.Status, ans.Code, truncate(ans.Message, 200))
	}
	if !strings.HasPrefix(ans.URL, "wss://") && !strings.HasPrefix(ans.URL, "ws://") {
		return "", errors.New("GET /gateway: the gateway URL is not a WebSocket URL")
	}
	return ans.URL, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// gatewayRun is one connection to the gateway.
type gatewayRun struct {
	p     *Provider
	cfg   Config
	token string
	conn  *websocket.Conn
	sink  push.EventSink
	cur   gatewayCursor

	seq         atomic.Int64
	acked       atomic.Bool
	resuming    bool
	established time.Time
}

func (g *gatewayRun) write(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return g.conn.Write(ctx, websocket.MessageText, b)
}

func (g *gatewayRun) read(ctx context.Context) (payload, error) {
	_, b, err := g.conn.Read(ctx)
	if err != nil {
		return payload{}, err
	}
	return decodeFrame(b)
}

func (g *gatewayRun) run(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	hello, err := g.read(hctx)
	cancel()
	if err != nil {
		return fmt.Errorf("waiting for the gateway's hello: %w", err)
	}
	var h struct {
		Interval int64 `json:"heartbeat_interval"`
	}
	if hello.Op != opHello || json.Unmarshal(hello.D, &h) != nil || h.Interval <= 0 {
		return fmt.Errorf("the gateway's first frame is op %d, not a hello with a heartbeat interval", hello.Op)
	}
	interval := time.Duration(h.Interval) * time.Millisecond
	g.seq.Store(g.cur.seq)
	if g.cur.session != "" {
		g.resuming = true
		err = g.write(ctx, map[string]any{"op": opResume, "d": map[string]any{"token": "QQBot " + g.token, "session_id": g.cur.session, "seq": g.cur.seq}})
	} else {
		err = g.write(ctx, map[string]any{"op": opIdentify, "d": map[string]any{"token": "QQBot " + g.token, "intents": intentGroupAndC2C,
			"shard": []int{0, 1}, "properties": map[string]string{"$os": "linux", "$browser": "herald", "$device": "herald"}}})
	}
	if err != nil {
		return fmt.Errorf("identifying to the gateway: %w", err)
	}
	hbctx, stop := context.WithCancel(ctx)
	defer stop()
	g.acked.Store(true)
	go g.heartbeat(hbctx, interval)
	for {
		pl, err := g.read(ctx)
		if err != nil {
			return g.closed(ctx, err)
		}
		switch pl.Op {
		case opHeartbeatACK:
			g.acked.Store(true)
		case opHeartbeat:
			if err := g.write(ctx, map[string]any{"op": opHeartbeat, "d": g.seq.Load()}); err != nil {
				return g.closed(ctx, err)
			}
		case opReconnect:
			return nil // the cursor is saved: the next run resumes
		case opInvalidSession:
			// The session cannot be resumed: the next run identifies anew.
			if err := g.sink.SaveCursor(ctx, ""); err != nil {
				return err
			}
			if g.resuming {
				return nil
			}
			return errors.New("the gateway refused the bot's identify (op 9): check the bot's intents and credentials")
		case opDispatch:
			if err := g.dispatch(ctx, pl); err != nil {
				return err
			}
		}
	}
}

// dispatch handles one op 0 frame and saves the cursor after it.
func (g *gatewayRun) dispatch(ctx context.Context, pl payload) error {
	switch pl.T {
	case "READY":
		var d struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(pl.D, &d) != nil || d.SessionID == "" || len(d.SessionID) > maxID || strings.Contains(d.SessionID, " ") {
			return errors.New("the gateway's READY has no session_id")
		}
		g.cur.session = d.SessionID
		g.established = time.Now()
	case "RESUMED":
		g.established = time.Now()
	default:
		if ev, ok := pl.event(); ok {
			if err := g.p.handle(ctx, g.cfg, ev, g.sink); err != nil {
				return err
			}
		}
	}
	if pl.S > 0 {
		g.seq.Store(pl.S)
		g.cur.seq = pl.S
	}
	if g.cur.session == "" {
		return nil
	}
	return g.sink.SaveCursor(ctx, g.cur.String())
}

// heartbeat sends op 1 every interval; a heartbeat that was not acked by
// the next one ends the connection (the gateway is gone).
func (g *gatewayRun) heartbeat(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !g.acked.Swap(false) {
			_ = g.conn.Close(websocket.StatusGoingAway, "no heartbeat ack")
			return
		}
		var d any
		if s := g.seq.Load(); s > 0 {
			d = s
		}
		if err := g.write(ctx, map[string]any{"op": opHeartbeat, "d": d}); err != nil {
			return
		}
	}
}

// closed says what a connection that ended means: nil when the next run
// should go on at once (a session that lasted, dropped or asked to be
// resumed), an error for the engine to back off from otherwise.
func (g *gatewayRun) closed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	code := websocket.CloseStatus(err)
	switch {
	case code == 4004:
		g.p.tokens.Invalidate(tokenKey(g.cfg), g.token)
		return errors.New("the gateway refused the access token (4004)")
	case code == 4013 || code == 4014:
		return fmt.Errorf("the gateway refused the bot's intents (%d): the bot lacks the permission for C2C and group events", code)
	case code == 4914 || code == 4915:
		return fmt.Errorf("the gateway refused the bot (%d): the bot is offline or banned on QQ", code)
	case code == 4006 || code == 4007 || (code >= 4900 && code <= 4913):
		// The session is gone: identify anew next time.
		if serr := g.sink.SaveCursor(ctx, ""); serr != nil {
			return serr
		}
	}
	if !g.established.IsZero() && time.Since(g.established) >= minSession {
		return nil
	}
	if code != -1 {
		return fmt.Errorf("the gateway closed the connection (%d)", code)
	}
	return fmt.Errorf("the gateway connection broke: %w", err)
}
