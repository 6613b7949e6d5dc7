package wecom

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms/internal/wxcrypt"
	"github.com/heraldpush/herald/push"
)

// A WeCom app hears its members at its webhook only (WeCom has no
// outbound mode for apps): the app's API receive settings (接收消息) name
// Herald's /api/hooks/{bot} as the URL, with the bot's token and
// EncodingAESKey. Every request is encrypted for the corp and signed over
// the ciphertext; the passive reply goes back encrypted. A member binds
// themself by sending "bind <code>" to the app: the target is their
// UserID.

var _ push.EventSource = (*Provider)(nil)

// ReceiveMode implements push.EventSource: an app with the callback's
// token hears its members at its webhook.
func (p *Provider) ReceiveMode(raw json.RawMessage) push.ReceiveMode {
	cfg, err := p.configs.Get(raw, p.parseConfig)
	if err != nil || cfg.Mode != ModeApp || cfg.Token == "" {
		return push.ReceiveNone
	}
	return push.ReceiveWebhook
}

// Receive implements push.EventSource: a WeCom app has no outbound mode.
func (p *Provider) Receive(context.Context, push.Bot, string, push.EventSink) error {
	return errors.New("a wecom app hears its members at its webhook only")
}

// Webhook implements push.EventSource. The message signature over the
// token, the timestamp, the nonce and the ciphertext is checked (in
// constant time, the timestamp within a window) before the ciphertext is
// decrypted, which must be for the bot's corp. GET is WeCom's URL check,
// answered with the decrypted echostr. A passive reply goes back
// encrypted in the answer.
func (p *Provider) Webhook(ctx context.Context, bot push.Bot, req push.WebhookRequest, sink push.EventSink) push.WebhookResponse {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil || cfg.Mode != ModeApp || cfg.Token == "" {
		return push.WebhookRefused()
	}
	key, err := wxcrypt.Key(cfg.EncodingAESKey)
	if err != nil {
		return push.WebhookRefused()
	}
	now := p.tokens.Now()
	ts, nonce, sig := req.QueryValue("timestamp"), req.QueryValue("nonce"), req.QueryValue("msg_signature")
	if !wxcrypt.Fresh(ts, now) {
		return push.WebhookRefused()
	}
	switch req.Method {
	case http.MethodGet:
		echo := req.QueryValue("echostr")
		if echo == "" || !wxcrypt.Verify(sig, cfg.Token, ts, nonce, echo) {
			return push.WebhookRefused()
		}
		plain, err := wxcrypt.Decrypt(key, echo, cfg.CorpID)
		if err != nil {
			return push.WebhookRefused()
		}
		// The plaintext as is: no quotes, BOM or newline.
		return push.WebhookResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: plain}
	case http.MethodPost:
	default:
		return push.WebhookRefused()
	}
	if len(req.Body) > wxcrypt.MaxBody {
		return push.WebhookResponse{Status: http.StatusRequestEntityTooLarge, ContentType: "text/plain", Body: []byte("the body is larger than an event\n")}
	}
	if sig == "" {
		return push.WebhookRefused()
	}
	env, err := wxcrypt.Parse(req.Body)
	if err != nil || env.Encrypt == "" || !wxcrypt.Verify(sig, cfg.Token, ts, nonce, env.Encrypt) {
		return push.WebhookRefused()
	}
	plain, err := wxcrypt.Decrypt(key, env.Encrypt, cfg.CorpID)
	if err != nil {
		return push.WebhookRefused()
	}
	msg, err := wxcrypt.Parse(plain)
	if err != nil {
		return push.WebhookResponse{Status: http.StatusBadRequest, ContentType: "text/plain", Body: []byte("the decrypted message is not WeCom's XML\n")}
	}
	if msg.AgentID != "" && msg.AgentID != strconv.FormatInt(cfg.AgentID, 10) {
		return push.WebhookResponse{Status: http.StatusOK} // another app's message: nothing to hear
	}
	ev, ok := event(msg)
	if !ok {
		return push.WebhookResponse{Status: http.StatusOK}
	}
	r, err := sink.Handle(ctx, ev)
	if err != nil {
		// WeCom sends the message again.
		return push.WebhookResponse{Status: http.StatusServiceUnavailable, ContentType: "text/plain", Body: []byte("retry later\n")}
	}
	if r.Text == "" {
		return push.WebhookResponse{Status: http.StatusOK}
	}
	out, err := wxcrypt.Seal(cfg.Token, key, cfg.CorpID, wxcrypt.TextReply(msg.FromUserName, msg.ToUserName, r.Text, now), now)
	if err != nil {
		return push.WebhookResponse{Status: http.StatusOK}
	}
	return push.WebhookResponse{Status: http.StatusOK, ContentType: "application/xml; charset=utf-8", Body: out}
}

// event turns a message of WeCom into the engine's event: a member's text
// message; a member who entered the app's visible range (or opened the
// app); one who left it or the corp. Events have no id, so theirs is the
// member and the time.
func event(m wxcrypt.Message) (push.Event, bool) {
	if m.FromUserName == "" {
		return push.Event{}, false
	}
	ev := push.Event{Type: push.TargetUser, Address: m.FromUserName, At: time.Unix(m.CreateTime, 0)}
	evID := "ev:" + m.FromUserName + ":" + strconv.FormatInt(m.CreateTime, 10) + ":"
	switch m.MsgType {
	case "text":
		ev.ID, ev.Kind, ev.Text, ev.MessageID = "msg:"+m.MsgID, push.EventMessage, m.Content, m.MsgID
		if m.MsgID == "" {
			ev.ID = evID + "text"
		}
		return ev, true
	case "event":
	default:
		return ev, false
	}
	switch e := strings.ToLower(m.Event); e {
	case "subscribe", "enter_agent":
		ev.ID, ev.Kind = evID+e, push.EventJoined
		return ev, true
	case "unsubscribe":
		ev.ID, ev.Kind, ev.Text = evID+e, push.EventLeft, "left the app's visible range or the corp"
		return ev, true
	}
	return ev, false
}
