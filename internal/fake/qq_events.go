package fake

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// The QQ fake's events: what users do (write to the bot, add or delete
// it, turn its messages off, add it to a group…) becomes an event of the
// bot's app, delivered as QQ does: over the WebSocket gateway (GET
// /gateway gives its URL; Hello with the heartbeat interval, Identify
// with a live token and the C2C/group intent, READY with a session, each
// dispatch with the next seq, op 11 for each heartbeat, a connection that
// misses its heartbeats closed with 4009, Resume replaying every event
// after the given seq then RESUMED), or, once a callback URL is set (as
// in QQ's console, which checks it with op 13 first), as webhook pushes
// signed with ed25519 by the key whose seed is the app's secret. The
// messages users write are what the bot's passive replies answer: the
// message endpoint takes msg_id (or event_id) and msg_seq under QQ's
// window rules.

// QQ's reply windows, as the fake applies them (the event window is not
// documented: the fake assumes what Herald does).
const (
	qqC2CWindow   = 60 * time.Minute
	qqGroupWindow = 5 * time.Minute
	qqEventWindow = 5 * time.Minute
	qqMaxReplies  = 5
)

// qqInbound is a message or event a reply may answer.
type qqInbound struct {
	appID, scene, target, kind string
	at                         time.Time
	seqs                       map[int]bool
}

// qqFrame is one dispatch in a gateway session.
type qqFrame struct {
	seq  int64
	body []byte
}

// qqEvents is one app's event stream.
type qqEvents struct {
	callback   string // the webhook URL; "" delivers over the gateway
	session    string
	seq        int64
	log        []qqFrame
	wake       chan struct{}
	conn       *websocket.Conn
	dropAfter  int // the connection drops after this many more dispatches (0: never)
	identifies int
	resumes    int
	answers    []int // the statuses the webhook answered
	acks       []string
}

func (f *QQ) appEvents(appID string) *qqEvents {
	if f.events == nil {
		f.events = make(map[string]*qqEvents)
	}
	s := f.events[appID]
	if s == nil {
		s = &qqEvents{wake: make(chan struct{})}
		f.events[appID] = s
	}
	return s
}

func (f *QQ) now() time.Time {
	f.mu.Lock()
	clock := f.clock
	f.mu.Unlock()
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// SetClock makes the fake judge reply windows and sign pushes by now
// instead of the real time (the Herald's clock, which tests move).
func (f *QQ) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = now
}

// SetHeartbeat sets the heartbeat interval the gateway's Hello gives
// (default 1 s); a connection silent for two intervals is closed.
func (f *QQ) SetHeartbeat(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeat = d
}

// QQSignature is the hex ed25519 signature QQ puts in
// X-Signature-Ed25519: of timestamp || body, by the key whose seed is the
// app's secret repeated to 32 bytes.
func QQSignature(secret, timestamp string, body []byte) string {
	return hex.EncodeToString(ed25519.Sign(qqKey(secret), append([]byte(timestamp), body...)))
}

func qqKey(secret string) ed25519.PrivateKey {
	seed := []byte(secret)
	for len(seed) < ed25519.SeedSize {
		seed = append(seed, secret...)
	}
	return ed25519.NewKeyFromSeed(seed[:ed25519.SeedSize])
}

// SetCallback sets the app's webhook URL as QQ's console does: QQ first
// checks it with op 13 (the answer must sign the plain_token with the
// app's key), and refuses a URL that does not answer so. From then on the
// app's events are pushed there instead of the gateway.
func (f *QQ) SetCallback(appID, url string) bool {
	f.mu.Lock()
	secret := f.apps[appID].secret
	f.mu.Unlock()
	plain := randomSecret(20)
	ts := strconv.FormatInt(f.now().Unix(), 10)
	body, _ := json.Marshal(map[string]any{"op": 13, "d": map[string]string{"plain_token": plain, "event_ts": ts}})
	status, answer := f.post(appID, secret, url, body)
	var ans struct {
		PlainToken string `json:"plain_token"`
		Signature  string `json:"signature"`
	}
	if status != http.StatusOK || json.Unmarshal(answer, &ans) != nil || ans.PlainToken != plain {
		return false
	}
	sig, err := hex.DecodeString(ans.Signature)
	if err != nil || !ed25519.Verify(qqKey(secret).Public().(ed25519.PublicKey), []byte(ts+plain), sig) {
		return false
	}
	f.mu.Lock()
	f.appEvents(appID).callback = url
	f.mu.Unlock()
	return true
}

// post sends a signed push to a webhook and returns its answer.
func (f *QQ) post(appID, secret, url string, body []byte) (int, []byte) {
	ts := strconv.FormatInt(f.now().Unix(), 10)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "QQBot-Callback")
	req.Header.Set("X-Bot-Appid", appID)
	req.Header.Set("X-Signature-Timestamp", ts)
	req.Header.Set("X-Signature-Ed25519", QQSignature(secret, ts, body))
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// WriteC2C makes a user write text to the bot in a private chat: a
// C2C_MESSAGE_CREATE event. It returns the message's id (what replies
// answer). The user becomes known, and may be woken up once.
func (f *QQ) WriteC2C(appID, openid, text string) string {
	f.mu.Lock()
	f.users[openid] = true
	f.wakeups[openid]++
	f.mu.Unlock()
	id := "ROBOT1.0_" + randomSecret(22)
	f.remember(id, qqInbound{appID: appID, scene: "c2c", target: openid, kind: "message"})
	f.emit(appID, "C2C_MESSAGE_CREATE", map[string]any{"id": id, "content": text, "timestamp": f.now().Format(time.RFC3339),
		"author": map[string]any{"user_openid": openid}})
	return id
}

// WriteGroup makes a member @-mention the bot in a group with text: a
// GROUP_AT_MESSAGE_CREATE event, whose content starts with a space where
// the mention was. It returns the message's id.
func (f *QQ) WriteGroup(appID, groupOpenID, memberOpenID, text string) string {
	f.AddGroup(groupOpenID)
	id := "ROBOT1.0_" + randomSecret(22)
	f.remember(id, qqInbound{appID: appID, scene: "group", target: groupOpenID, kind: "message"})
	f.emit(appID, "GROUP_AT_MESSAGE_CREATE", map[string]any{"id": id, "content": " " + text, "timestamp": f.now().Format(time.RFC3339),
		"group_openid": groupOpenID, "author": map[string]any{"member_openid": memberOpenID}})
	return id
}

// UserEvent makes a user add or delete the bot (FRIEND_ADD, FRIEND_DEL)
// or turn its messages on or off (C2C_MSG_RECEIVE, C2C_MSG_REJECT). A
// user who deleted the bot is unknown to the message endpoint until it
// adds the bot again. It returns the event's id.
func (f *QQ) UserEvent(appID, openid, t string) string {
	f.mu.Lock()
	switch t {
	case "FRIEND_ADD", "C2C_MSG_RECEIVE":
		f.users[openid] = true
	case "FRIEND_DEL", "C2C_MSG_REJECT":
		f.users[openid] = false
	}
	f.mu.Unlock()
	return f.emit(appID, t, map[string]any{"openid": openid, "timestamp": f.now().Unix()})
}

// GroupEvent makes a group add or remove the bot (GROUP_ADD_ROBOT,
// GROUP_DEL_ROBOT) or turn its messages on or off (GROUP_MSG_RECEIVE,
// GROUP_MSG_REJECT). It returns the event's id.
func (f *QQ) GroupEvent(appID, groupOpenID, t string) string {
	f.mu.Lock()
	switch t {
	case "GROUP_ADD_ROBOT", "GROUP_MSG_RECEIVE":
		f.groups[groupOpenID] = true
	case "GROUP_DEL_ROBOT", "GROUP_MSG_REJECT":
		f.groups[groupOpenID] = false
	}
	f.mu.Unlock()
	return f.emit(appID, t, map[string]any{"group_openid": groupOpenID, "op_member_openid": randomSecret(32), "timestamp": f.now().Unix()})
}

// DropAfter makes the app's gateway connection break (no close frame)
// after n more dispatches; the events after them wait for a resume.
func (f *QQ) DropAfter(appID string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appEvents(appID).dropAfter = n
}

// GatewaySessions returns how many times the app identified and resumed.
func (f *QQ) GatewaySessions(appID string) (identifies, resumes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.appEvents(appID)
	return s.identifies, s.resumes
}

// Connected says whether the app has a live gateway connection that
// identified or resumed.
func (f *QQ) Connected(appID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.appEvents(appID).conn != nil
}

// WebhookAnswers returns the statuses the app's webhook answered pushes
// with, and the op 12 answers' d values ("0" handled, "1" failed).
func (f *QQ) WebhookAnswers(appID string) ([]int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.appEvents(appID)
	return append([]int(nil), s.answers...), append([]string(nil), s.acks...)
}

func (f *QQ) remember(id string, in qqInbound) {
	in.at = f.now()
	in.seqs = make(map[int]bool)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inbound == nil {
		f.inbound = make(map[string]*qqInbound)
	}
	f.inbound[id] = &in
}

// emit delivers an event of the app: pushed to its webhook, or queued in
// its gateway session. It returns the event's id.
func (f *QQ) emit(appID, t string, d map[string]any) string {
	id := t + ":" + randomSecret(24)
	switch t {
	case "FRIEND_ADD", "C2C_MSG_RECEIVE":
		f.remember(id, qqInbound{appID: appID, scene: "c2c", target: d["openid"].(string), kind: "event"})
	case "GROUP_ADD_ROBOT", "GROUP_MSG_RECEIVE":
		f.remember(id, qqInbound{appID: appID, scene: "group", target: d["group_openid"].(string), kind: "event"})
	}
	f.mu.Lock()
	s := f.appEvents(appID)
	s.seq++
	frame := map[string]any{"op": 0, "id": id, "t": t, "d": d, "s": s.seq}
	body, _ := json.Marshal(frame)
	hook, secret := s.callback, f.apps[appID].secret
	if hook == "" {
		s.log = append(s.log, qqFrame{seq: s.seq, body: body})
		close(s.wake)
		s.wake = make(chan struct{})
	}
	f.mu.Unlock()
	if hook != "" {
		status, answer := f.post(appID, secret, hook, body)
		var ack struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		_ = json.Unmarshal(answer, &ack)
		f.mu.Lock()
		s.answers = append(s.answers, status)
		s.acks = append(s.acks, string(ack.D))
		f.mu.Unlock()
	}
	return id
}

// checkReply applies QQ's passive reply rules to a message with msg_id or
// event_id and msg_seq: a known message (or allowed event) of this app
// and chat, within its window, fewer than 5 replies so far, and a msg_seq
// not used before for it. It records the reply when ok.
func (f *QQ) checkReply(appID, scene, target, msgID, eventID string, seq int) (bool, int, string) {
	id := msgID
	if id == "" {
		id = eventID
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.inbound[id]
	if in == nil || in.appID != appID || in.scene != scene || in.target != target || (msgID != "") != (in.kind == "message") {
		return false, 304026, "回复的消息 id 错误"
	}
	window := qqEventWindow
	if in.kind == "message" {
		window = qqC2CWindow
		if scene == "group" {
			window = qqGroupWindow
		}
	}
	switch {
	case now.Sub(in.at) > window:
		return false, 304027, "消息已过期"
	case in.seqs[seq]:
		return false, 40054005, "消息被去重，请检查请求msgseq"
	case len(in.seqs) >= qqMaxReplies:
		return false, 22009, "msg limit exceed"
	}
	in.seqs[seq] = true
	return true, 0, ""
}

// gateway answers GET /gateway with the gateway's URL.
func (f *QQ) gateway(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.auth(w, r); !ok {
		return
	}
	qqWrite(w, http.StatusOK, map[string]any{"url": "ws://" + r.Host + "/websocket"})
}

// websocket runs one gateway connection.
func (f *QQ) websocket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = c.CloseNow() }()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	f.mu.Lock()
	interval := f.heartbeat
	f.mu.Unlock()
	if interval <= 0 {
		interval = time.Second
	}
	send := func(v any) error {
		b, _ := json.Marshal(v)
		return c.Write(ctx, websocket.MessageText, b)
	}
	if send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": interval.Milliseconds()}}) != nil {
		return
	}
	rctx, rcancel := context.WithTimeout(ctx, 2*interval)
	_, first, err := c.Read(rctx)
	rcancel()
	if err != nil {
		_ = c.Close(4009, "session timed out")
		return
	}
	var hello struct {
		Op int `json:"op"`
		D  struct {
			Token     string `json:"token"`
			Intents   int64  `json:"intents"`
			SessionID string `json:"session_id"`
			Seq       int64  `json:"seq"`
		} `json:"d"`
	}
	if json.Unmarshal(first, &hello) != nil || (hello.Op != 2 && hello.Op != 6) {
		_ = c.Close(4001, "invalid opcode")
		return
	}
	tok, ok := strings.CutPrefix(hello.D.Token, "QQBot ")
	t, state := f.check(tok)
	if !ok || state != tokenLive {
		_ = c.Close(4004, "invalid token")
		return
	}
	appID := t.owner
	f.mu.Lock()
	s := f.appEvents(appID)
	var sent int64
	if hello.Op == 2 {
		if hello.D.Intents&(1<<25) == 0 {
			f.mu.Unlock()
			_ = c.Close(4014, "disallowed intents")
			return
		}
		s.identifies++
		s.session = randomSecret(36)
		s.seq++
		ready, _ := json.Marshal(map[string]any{"op": 0, "t": "READY", "s": s.seq, "d": map[string]any{"version": 1, "session_id": s.session,
			"user": map[string]any{"id": appID, "username": "herald-test", "bot": true}, "shard": []int{0, 1}}})
		// A new session: only what comes from now on.
		s.log = []qqFrame{{seq: s.seq, body: ready}}
		sent = s.seq - 1
	} else {
		if hello.D.SessionID != s.session || s.session == "" || hello.D.Seq > s.seq {
			f.mu.Unlock()
			_ = send(map[string]any{"op": 9, "d": false})
			_ = c.Close(4009, "invalid session")
			return
		}
		s.resumes++
		sent = hello.D.Seq
	}
	if s.conn != nil {
		_ = s.conn.CloseNow()
	}
	s.conn = c
	resumed := hello.Op == 6
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		if s.conn == c {
			s.conn = nil
		}
		f.mu.Unlock()
	}()
	beat := make(chan struct{}, 1)
	go func() { // the reader: heartbeats
		defer cancel()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var fr struct {
				Op int `json:"op"`
			}
			if json.Unmarshal(b, &fr) == nil && fr.Op == 1 {
				select {
				case beat <- struct{}{}:
				default:
				}
				if send(map[string]any{"op": 11}) != nil {
					return
				}
			}
		}
	}()
	deadline := time.NewTimer(2 * interval)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var next []qqFrame
		for _, fr := range s.log {
			if fr.seq > sent {
				next = append(next, fr)
			}
		}
		wake := s.wake
		f.mu.Unlock()
		for _, fr := range next {
			if c.Write(ctx, websocket.MessageText, fr.body) != nil {
				return
			}
			sent = fr.seq
			f.mu.Lock()
			drop := false
			if s.dropAfter > 0 {
				s.dropAfter--
				drop = s.dropAfter == 0
			}
			f.mu.Unlock()
			if drop {
				return // the deferred CloseNow breaks the connection without a close frame
			}
		}
		if resumed {
			resumed = false
			if send(map[string]any{"op": 0, "t": "RESUMED", "d": ""}) != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-beat:
			deadline.Reset(2 * interval)
		case <-deadline.C:
			_ = c.Close(4009, "session timed out: no heartbeat")
			return
		}
	}
}

// EndSession ends the app's gateway session (as QQ does after a while):
// the connection breaks, and a resume is answered with op 9 (invalid
// session), so the bot must identify anew. Events before the end are
// lost unless delivered.
func (f *QQ) EndSession(appID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.appEvents(appID)
	s.session = ""
	if s.conn != nil {
		_ = s.conn.CloseNow()
	}
}
