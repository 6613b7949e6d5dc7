package qq

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
)

// A QQ bot hears its users in one of two modes, chosen in its config's
// "receive": "gateway" (the default: QQ's WebSocket gateway, which needs
// no public address) or "webhook" (QQ calls the bot's webhook, checked
// with an ed25519 signature made from the bot's secret). Both carry the
// same payloads, {"id","op","d","s","t"}, turned here into the engine's
// events: C2C and group @-messages (bind codes, and the message ids that
// QQ's passive replies answer), friends and groups adding or removing the
// bot, and users or group admins turning the bot's messages off or on.
//
// Since 2025-04-21 QQ takes messages to users and groups only as passive
// replies, so the provider implements push.ReplyRules and sends each push
// as the reply the engine claimed for it (msg_id or event_id, and msg_seq).

var (
	_ push.EventSource = (*Provider)(nil)
	_ push.ReplyRules  = (*Provider)(nil)
)

// The receive modes of a bot's config.
const (
	receiveGateway = "gateway"
	receiveWebhook = "webhook"
	receiveNone    = "none"
)

// ReceiveMode implements push.EventSource: the gateway unless the config
// says otherwise.
func (p *Provider) ReceiveMode(raw json.RawMessage) push.ReceiveMode {
	cfg, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return push.ReceiveNone
	}
	switch cfg.Receive {
	case "", receiveGateway:
		return push.ReceiveOutbound
	case receiveWebhook:
		return push.ReceiveWebhook
	}
	return push.ReceiveNone
}

// QQ's reply windows (EVENTS.md §2, from QQ's send.md): a C2C message
// takes passive replies for 60 minutes, a group message for 5, at most
// 5 replies each. How long an event_id (FRIEND_ADD, C2C_MSG_RECEIVE,
// GROUP_ADD_ROBOT, GROUP_MSG_RECEIVE) stays usable is not documented:
// Herald assumes the group message window, 5 minutes, for both scenes,
// with the same 5 replies.
const (
	c2cMessageWindow   = 60 * time.Minute
	groupMessageWindow = 5 * time.Minute
	eventWindow        = 5 * time.Minute
	repliesPerMessage  = 5
)

// ReplyRules implements push.ReplyRules.
func (p *Provider) ReplyRules(tt push.TargetType) push.ReplyRule {
	r := push.ReplyRule{MessageWindow: c2cMessageWindow, EventWindow: eventWindow, PerMessage: repliesPerMessage}
	if tt == push.TargetGroup {
		r.MessageWindow = groupMessageWindow
	}
	return r
}

// QQ's op codes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
	opCallbackACK    = 12
	opValidation     = 13
)

// payload is QQ's frame, over the gateway and the webhook alike.
type payload struct {
	ID string          `json:"id,omitempty"`
	Op int             `json:"op"`
	D  json.RawMessage `json:"d,omitempty"`
	S  int64           `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// eventData is the part of an event's d the engine uses.
type eventData struct {
	ID          string `json:"id"`
	Content     string `json:"content"`
	Timestamp   any    `json:"timestamp"`
	GroupOpenID string `json:"group_openid"`
	OpenID      string `json:"openid"`
	Author      struct {
		UserOpenID   string `json:"user_openid"`
		MemberOpenID string `json:"member_openid"`
	} `json:"author"`
}

// maxID caps the ids taken from an event (QQ's are far shorter).
const maxID = 256

// at reads an event's timestamp: RFC 3339 in message events, a unix time
// (number or string) in the others.
func (d eventData) at() time.Time {
	switch v := d.Timestamp.(type) {
	case string:
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
		var n json.Number = json.Number(v)
		if i, err := n.Int64(); err == nil && i > 0 {
			return time.Unix(i, 0)
		}
	case float64:
		if v > 0 {
			return time.Unix(int64(v), 0)
		}
	}
	return time.Time{}
}

// event turns a dispatch into the engine's event (ok false for one that
// says nothing the engine keeps, or whose ids are not QQ's shape).
func (pl payload) event() (push.Event, bool) {
	var d eventData
	if pl.Op != opDispatch || len(pl.ID) > maxID || json.Unmarshal(pl.D, &d) != nil {
		return push.Event{}, false
	}
	ev := push.Event{ID: pl.ID, At: d.at()}
	switch pl.T {
	case "C2C_MESSAGE_CREATE":
		ev.Kind, ev.Type, ev.Address = push.EventMessage, push.TargetUser, d.Author.UserOpenID
	case "GROUP_AT_MESSAGE_CREATE":
		ev.Kind, ev.Type, ev.Address = push.EventMessage, push.TargetGroup, d.GroupOpenID
	case "FRIEND_ADD", "C2C_MSG_RECEIVE":
		ev.Kind, ev.Type, ev.Address = push.EventJoined, push.TargetUser, d.OpenID
	case "FRIEND_DEL":
		ev.Kind, ev.Type, ev.Address, ev.Text = push.EventLeft, push.TargetUser, d.OpenID, "removed the bot from its friends"
	case "C2C_MSG_REJECT":
		ev.Kind, ev.Type, ev.Address, ev.Text = push.EventLeft, push.TargetUser, d.OpenID, "turned the bot's messages off"
	case "GROUP_ADD_ROBOT", "GROUP_MSG_RECEIVE":
		ev.Kind, ev.Type, ev.Address = push.EventJoined, push.TargetGroup, d.GroupOpenID
	case "GROUP_DEL_ROBOT":
		ev.Kind, ev.Type, ev.Address, ev.Text = push.EventLeft, push.TargetGroup, d.GroupOpenID, "removed the bot from the group"
	case "GROUP_MSG_REJECT":
		ev.Kind, ev.Type, ev.Address, ev.Text = push.EventLeft, push.TargetGroup, d.GroupOpenID, "turned the bot's messages in the group off"
	default:
		return push.Event{}, false
	}
	if ev.Address == "" || len(ev.Address) > maxID {
		return push.Event{}, false
	}
	if ev.Kind == push.EventMessage {
		if d.ID == "" || len(d.ID) > maxID {
			return push.Event{}, false
		}
		// QQ may push one message twice under two payload ids: the
		// message's own id is what the engine dedups on.
		ev.ID, ev.MessageID = "msg:"+d.ID, d.ID
		ev.Text = strings.TrimSpace(d.Content) // a group message starts with a space where the @ was
	}
	if ev.ID == "" {
		return push.Event{}, false
	}
	return ev, true
}

// handle reports one event to the sink and sends its answer, if any, as a
// passive reply to the event's message.
func (p *Provider) handle(ctx context.Context, cfg Config, ev push.Event, sink push.EventSink) error {
	reply, err := sink.Handle(ctx, ev)
	if err != nil || reply.Text == "" || ev.MessageID == "" {
		return err
	}
	r := reply.Reply
	if r.MessageID == "" && r.EventID == "" {
		r = push.ReplyTo{MessageID: ev.MessageID, Seq: 1}
	}
	body := map[string]any{"msg_type": msgText, "content": reply.Text}
	setReply(body, &r)
	prefix := "/v2/users/"
	if ev.Type == push.TargetGroup {
		prefix = "/v2/groups/"
	}
	// The event is handled: its answer is sent even while the receiver
	// stops. A failed answer is left to the person, who may send the code
	// again.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replyTimeout)
	defer cancel()
	_, _ = p.post(rctx, cfg, prefix+url.PathEscape(ev.Address), body, scene{group: ev.Type == push.TargetGroup})
	return nil
}

// replyTimeout caps the sending of an answer to an event.
const replyTimeout = 10 * time.Second

// setReply makes a message body a passive reply.
func setReply(body map[string]any, r *push.ReplyTo) {
	if r == nil || (r.MessageID == "" && r.EventID == "") {
		return
	}
	if r.MessageID != "" {
		body["msg_id"] = r.MessageID
	} else {
		body["event_id"] = r.EventID
	}
	body["msg_seq"] = max(r.Seq, 1)
}
