package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/encoding/protowire"
)

// The Feishu fake's long connection, as the vendor SDK speaks it: POST
// /callback/ws/endpoint with {"AppID","AppSecret"} answers a one-use
// WebSocket URL (device_id, service_id, a ticket) and the client's
// settings (PingInterval…); on the WebSocket, binary protobuf frames
// (pbbp2.Frame). The fake pushes the app's pending events as data frames
// (type=event, message_id, sum, seq, trace_id), split into parts when told
// to; an event is done only when the client sends the frame back with
// payload {"code":200} and the frame's message_id; others stay pending and
// are pushed again on the next connection. It answers each ping with a
// pong carrying the settings, and closes a connection that has not pinged
// within twice the interval and a second. Switches drop a connection
// after it carried some events, and lose acknowledgements.

const feishuConnPath = "/callback/ws/conn"

// feishuConn is one open long connection.
type feishuConn struct {
	app  string
	conn *websocket.Conn
}

// SetPingInterval sets the PingInterval (seconds) the endpoint gives
// clients (default 120).
func (f *Feishu) SetPingInterval(seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pingSecs = seconds
}

// DropConnection makes the app's next long connection close abruptly
// once it carried n events (their acknowledgements, if any, not awaited).
func (f *Feishu) DropConnection(app FeishuApp, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sub(app.AppID).dropAfter = n
}

// LoseAcks makes the next n acknowledgements of the app's events be lost:
// those events stay pending, and are pushed again.
func (f *Feishu) LoseAcks(app FeishuApp, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sub(app.AppID).loseAcks = n
}

// SplitEvents makes the fake send each of the app's events in n frames.
func (f *Feishu) SplitEvents(app FeishuApp, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sub(app.AppID).split = n
}

// LongConnStats are counts of an app's long connections.
type LongConnStats struct {
	Connections int // opened
	Live        int // open now
	Pings       int
	Acks        int // acknowledgements taken (code 200)
}

// LongConn returns the counts of an app's long connections.
func (f *Feishu) LongConn(app FeishuApp) LongConnStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sub(app.AppID)
	return LongConnStats{Connections: s.conns, Live: len(s.live), Pings: s.pings, Acks: s.acks}
}

func (f *Feishu) pingInterval() int {
	if f.pingSecs > 0 {
		return f.pingSecs
	}
	return 120
}

// endpoint answers the long connection's endpoint call.
func (f *Feishu) endpoint(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		AppID     string `json:"AppID"`
		AppSecret string `json:"AppSecret"`
	}
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
		feishuWrite(w, http.StatusBadRequest, map[string]any{"code": 1, "msg": "bad request"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	app := f.apps[req.AppID]
	if app == nil || app.secret != req.AppSecret {
		feishuWrite(w, http.StatusOK, map[string]any{"code": 10003, "msg": "invalid AppID or AppSecret"})
		return
	}
	if f.tickets == nil {
		f.tickets = make(map[string]string)
	}
	ticket := randomAlnum(24)
	f.tickets[ticket] = req.AppID
	f.seq++
	u := strings.Replace(f.URL(), "http://", "ws://", 1) + feishuConnPath +
		fmt.Sprintf("?device_id=%d&access_key=%s&service_id=33554678&ticket=%s", 7000000+f.seq, randomAlnum(16), ticket)
	feishuWrite(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "data": map[string]any{"URL": u,
		"ClientConfig": map[string]int{"ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 30, "PingInterval": f.pingInterval()}}})
}

// connect serves one long connection.
func (f *Feishu) connect(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	ticket := r.URL.Query().Get("ticket")
	app, ok := f.tickets[ticket]
	delete(f.tickets, ticket)
	ping := time.Duration(f.pingInterval()) * time.Second
	f.mu.Unlock()
	if !ok {
		w.Header().Set("Handshake-Status", "514")
		w.Header().Set("Handshake-Msg", "invalid ticket")
		w.Header().Set("Handshake-Autherrcode", "1000040351")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	c := &feishuConn{app: app, conn: conn}
	f.mu.Lock()
	s := f.sub(app)
	s.conns++
	s.live[c] = true
	f.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		conn.CloseNow()
		f.mu.Lock()
		delete(s.live, c)
		for _, p := range s.pending {
			if p.conn == c {
				p.conn = nil
			}
		}
		s.wakeLocked()
		f.mu.Unlock()
	}()
	go func() {
		f.pushEvents(ctx, c, s)
		cancel()
	}()
	for {
		// A client that stops pinging is closed.
		rctx, rcancel := context.WithTimeout(ctx, 2*ping+time.Second)
		typ, msg, err := conn.Read(rctx)
		rcancel()
		if err != nil || typ != websocket.MessageBinary {
			return
		}
		fr, err := decodeFeishuFrame(msg)
		if err != nil {
			_ = conn.Close(websocket.StatusProtocolError, "bad frame")
			return
		}
		switch {
		case fr.method == 0 && fr.header("type") == "ping":
			f.mu.Lock()
			s.pings++
			f.mu.Unlock()
			cfg, _ := json.Marshal(map[string]int{"ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 30, "PingInterval": int(ping / time.Second)})
			pong := feishuFrame{seqID: fr.seqID, logID: fr.logID, service: fr.service, method: 0, headers: [][2]string{{"type", "pong"}}, payload: cfg}
			if conn.Write(ctx, websocket.MessageBinary, pong.encode()) != nil {
				return
			}
		case fr.method == 1:
			f.ack(s, c, fr)
		}
	}
}

// ack takes a client's answer to an event.
func (f *Feishu) ack(s *feishuSub, c *feishuConn, fr feishuFrame) {
	var answer struct {
		Code int `json:"code"`
	}
	id := fr.header("message_id")
	if json.Unmarshal(fr.payload, &answer) != nil || answer.Code != http.StatusOK || id == "" || fr.header("biz_rt") == "" {
		return // not an acknowledgement: the event stays pending
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.loseAcks > 0 {
		s.loseAcks--
		return
	}
	for _, p := range s.pending {
		if p.id == id && p.conn == c {
			s.removeLocked(p)
			s.acks++
			return
		}
	}
}

// feishuAckWait is how long the fake waits for an event's
// acknowledgement before pushing it again (Feishu: 3 s).
const feishuAckWait = 3 * time.Second

// pushEvents pushes the app's pending events to a connection until it
// ends (or drops it when told to): those in flight on no connection, and
// those whose acknowledgement did not come in time.
func (f *Feishu) pushEvents(ctx context.Context, c *feishuConn, s *feishuSub) {
	sent := 0
	for {
		f.mu.Lock()
		var next *feishuPending
		now := time.Now()
		if s.webhook == "" {
			for _, p := range s.pending {
				if p.conn == nil || now.Sub(p.sentAt) > feishuAckWait {
					next = p
					break
				}
			}
		}
		parts := max(s.split, 1)
		wake := s.wake
		if next != nil {
			next.conn, next.sentAt = c, now
			s.deliveries[next.id]++
		}
		f.mu.Unlock()
		if next == nil {
			t := time.NewTimer(feishuAckWait / 4)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		size := (len(next.payload) + parts - 1) / parts
		for i := range parts {
			chunk := next.payload[min(i*size, len(next.payload)):min((i+1)*size, len(next.payload))]
			fr := feishuFrame{seqID: uint64(sent + 1), logID: uint64(time.Now().UnixNano()), service: 33554678, method: 1,
				headers: [][2]string{{"type", "event"}, {"message_id", next.id}, {"sum", strconv.Itoa(parts)}, {"seq", strconv.Itoa(i)},
					{"trace_id", randomAlnum(16)}, {"timestamp", strconv.FormatInt(time.Now().UnixMilli(), 10)}},
				payload: chunk}
			if c.conn.Write(ctx, websocket.MessageBinary, fr.encode()) != nil {
				return
			}
		}
		sent++
		f.mu.Lock()
		drop := s.dropAfter > 0 && sent >= s.dropAfter
		if drop {
			s.dropAfter = 0
		}
		f.mu.Unlock()
		if drop {
			c.conn.CloseNow()
			return
		}
	}
}

// feishuFrame is pbbp2.Frame as the fake reads and writes it.
type feishuFrame struct {
	seqID, logID    uint64
	service, method int32
	headers         [][2]string
	payload         []byte
}

func (fr feishuFrame) header(k string) string {
	for _, h := range fr.headers {
		if h[0] == k {
			return h[1]
		}
	}
	return ""
}

func (fr feishuFrame) encode() []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, fr.seqID)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, fr.logID)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(fr.service))
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(fr.method))
	for _, h := range fr.headers {
		hb := protowire.AppendTag(nil, 1, protowire.BytesType)
		hb = protowire.AppendString(hb, h[0])
		hb = protowire.AppendTag(hb, 2, protowire.BytesType)
		hb = protowire.AppendString(hb, h[1])
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, hb)
	}
	if len(fr.payload) > 0 {
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, fr.payload)
	}
	return b
}

// decodeFeishuFrame reads a frame; the four required fields must be there.
func decodeFeishuFrame(b []byte) (feishuFrame, error) {
	var fr feishuFrame
	required := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fr, protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.VarintType && num <= 4 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return fr, protowire.ParseError(n)
			}
			b = b[n:]
			required |= 1 << num
			switch num {
			case 1:
				fr.seqID = v
			case 2:
				fr.logID = v
			case 3:
				fr.service = int32(v)
			case 4:
				fr.method = int32(v)
			}
			continue
		}
		if typ == protowire.BytesType && (num == 5 || num == 8) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fr, protowire.ParseError(n)
			}
			b = b[n:]
			if num == 8 {
				fr.payload = append([]byte(nil), v...)
				continue
			}
			var h [2]string
			for len(v) > 0 {
				hn, ht, m := protowire.ConsumeTag(v)
				if m < 0 || ht != protowire.BytesType {
					return fr, fmt.Errorf("bad header")
				}
				s, m2 := protowire.ConsumeString(v[m:])
				if m2 < 0 {
					return fr, protowire.ParseError(m2)
				}
				v = v[m+m2:]
				if hn == 1 {
					h[0] = s
				} else if hn == 2 {
					h[1] = s
				}
			}
			fr.headers = append(fr.headers, h)
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return fr, protowire.ParseError(n)
		}
		b = b[n:]
	}
	if required != 0b11110 {
		return fr, fmt.Errorf("a required field is missing")
	}
	return fr, nil
}

// closeConns ends the open long connections (when the test ends).
func (f *Feishu) closeConns() {
	f.mu.Lock()
	var conns []*feishuConn
	for _, s := range f.subs {
		for c := range s.live {
			conns = append(conns, c)
		}
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.conn.CloseNow()
	}
}
