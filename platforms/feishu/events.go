package feishu

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// A Feishu/Lark app bot hears its users in one of two modes, chosen in its
// config's "receive": "longconn" (the long connection the bot opens to
// Feishu: no public address needed) or "webhook" (Feishu posts events to
// the bot's webhook, the app's Request URL). The app subscribes to
// im.message.receive_v1, im.chat.member.bot.added_v1 and
// im.chat.member.bot.deleted_v1 in the developer console, in the same
// mode. A person binds a chat by sending "bind <code>" to the bot in a
// private chat, or in a group with the bot mentioned.

var _ push.EventSource = (*Provider)(nil)

// The receive modes of a bot's config.
const (
	receiveLongConn = "longconn"
	receiveWebhook  = "webhook"
)

// checkReceive checks the receive fields of a config.
func checkReceive(c Config) error {
	switch c.Receive {
	case "", receiveLongConn:
	case receiveWebhook:
		if c.VerificationToken == "" {
			return botconfig.Missing("feishu", "verification_token", "the Verification Token of the app's encryption strategy (Events & Callbacks > Encryption Strategy): webhook mode checks it on every request")
		}
	default:
		return botconfig.Malformed("feishu", "receive", `how the bot hears its users: "longconn" (a long connection the bot opens: no public address needed) or "webhook" (Feishu posts to {public URL}/api/hooks/{bot})`)
	}
	if len(c.VerificationToken) > 128 || len(c.EncryptKey) > 128 {
		return botconfig.Malformed("feishu", "verification_token", "the verification token and the encrypt key are at most 128 characters")
	}
	return nil
}

// ReceiveMode implements push.EventSource.
func (p *Provider) ReceiveMode(raw json.RawMessage) push.ReceiveMode {
	cfg, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return push.ReceiveNone
	}
	switch cfg.Receive {
	case receiveLongConn:
		return push.ReceiveOutbound
	case receiveWebhook:
		return push.ReceiveWebhook
	}
	return push.ReceiveNone
}

// replyTimeout caps the reply to an event: Feishu wants an answer to a
// webhook request within 3 s, and to a long-connection event likewise.
const replyTimeout = 2 * time.Second

// Webhook implements push.EventSource: the request is verified (signature
// or verification token, timestamp window) before anything in it is acted
// on; the URL check is answered with its challenge; an event is reported,
// and the engine's reply sent to the chat through the API (Feishu has no
// passive reply).
func (p *Provider) Webhook(ctx context.Context, bot push.Bot, req push.WebhookRequest, sink push.EventSink) push.WebhookResponse {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return push.WebhookRefused()
	}
	if len(req.Body) > maxWebhookBody {
		return push.WebhookResponse{Status: http.StatusRequestEntityTooLarge, ContentType: "text/plain", Body: []byte("the body is larger than an event\n")}
	}
	env, err := verifyWebhook(cfg, req, p.tokens.Now())
	if err != nil {
		return push.WebhookRefused()
	}
	if env.Type == "url_verification" {
		body, _ := json.Marshal(map[string]string{"challenge": env.Challenge})
		return push.WebhookResponse{Status: http.StatusOK, ContentType: "application/json", Body: body}
	}
	if err := p.handle(ctx, cfg, env, sink); err != nil {
		// Feishu pushes the event again later.
		return push.WebhookResponse{Status: http.StatusServiceUnavailable, ContentType: "text/plain", Body: []byte("retry later\n")}
	}
	return push.WebhookResponse{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{"msg":"success"}`)}
}

// handle reports an event to the sink and sends its reply, if any. Only
// the sink's failure is an error: a reply that fails is left to the
// person, who may send the code again.
func (p *Provider) handle(ctx context.Context, cfg Config, env envelope, sink push.EventSink) error {
	ev, ok := decodeEvent(env)
	if !ok {
		return nil
	}
	reply, err := sink.Handle(ctx, ev)
	if err != nil {
		return err
	}
	if reply.Text != "" {
		rctx, cancel := context.WithTimeout(ctx, replyTimeout)
		defer cancel()
		_ = p.reply(rctx, cfg, ev, reply.Text)
	}
	return nil
}

// reply sends a text to the chat of an event: to the user (open_id) in a
// private chat, to the group (chat_id) otherwise.
func (p *Provider) reply(ctx context.Context, c Config, ev push.Event, text string) error {
	idType := OpenID
	if ev.Type == push.TargetGroup {
		idType = ChatID
	}
	api, tokenBase := p.apiBase(c), p.tokenBase(c)
	key := tokencache.Key("feishu", tokenBase, c.AppID, c.AppSecret)
	fetch := func(ctx context.Context) (tokencache.Token, error) { return p.fetchToken(ctx, tokenBase, c) }
	body := map[string]any{"receive_id": ev.Address, "msg_type": "text", "content": textContent(text)}
	if ev.MessageID != "" {
		// Feishu delivers one uuid once an hour: a redelivered event's
		// reply is not sent twice.
		body["uuid"] = uuidFor("reply:" + ev.MessageID)
	}
	_, err := tokencache.DoRefreshing(ctx, p.tokens, key, fetch, func(ctx context.Context, tok string) (string, error) {
		return p.post(ctx, api+"/open-apis/im/v1/messages?receive_id_type="+idType, tok, body)
	}, freshTokenRefused)
	return err
}

// The parts of the events a bot listens to.
type (
	userID struct {
		OpenID string `json:"open_id"`
	}
	messageEvent struct {
		Sender struct {
			SenderID   userID `json:"sender_id"`
			SenderType string `json:"sender_type"`
		} `json:"sender"`
		Message struct {
			MessageID   string `json:"message_id"`
			ChatID      string `json:"chat_id"`
			ChatType    string `json:"chat_type"`
			MessageType string `json:"message_type"`
			Content     string `json:"content"`
			Mentions    []struct {
				Key string `json:"key"`
			} `json:"mentions"`
		} `json:"message"`
	}
	chatEvent struct {
		ChatID     string `json:"chat_id"`
		OperatorID userID `json:"operator_id"`
		Name       string `json:"name"`
	}
)

// Event types.
const (
	eventMessage    = "im.message.receive_v1"
	eventBotAdded   = "im.chat.member.bot.added_v1"
	eventBotDeleted = "im.chat.member.bot.deleted_v1"
	eventDisbanded  = "im.chat.disbanded_v1"
	eventP2PEntered = "im.chat.access_event.bot_p2p_chat_entered_v1"
)

// decodeEvent turns a schema 2.0 event into the engine's event (ok false
// for one that says nothing the engine keeps).
func decodeEvent(env envelope) (push.Event, bool) {
	ev := push.Event{ID: env.Header.EventID}
	if ev.ID == "" || env.Schema != "2.0" {
		return ev, false // v1 events: the app subscribes to 2.0 ones
	}
	if ms, err := strconv.ParseInt(strings.Trim(string(env.Header.CreateTime), `"`), 10, 64); err == nil && ms > 0 {
		ev.At = time.UnixMilli(ms)
	}
	switch env.Header.EventType {
	case eventMessage:
		var m messageEvent
		if json.Unmarshal(env.Event, &m) != nil || m.Sender.SenderType != "user" || m.Message.MessageType != "text" {
			return ev, false
		}
		var content struct {
			Text string `json:"text"`
		}
		if json.Unmarshal([]byte(m.Message.Content), &content) != nil {
			return ev, false
		}
		text := content.Text
		for _, mention := range m.Message.Mentions {
			if mention.Key != "" {
				text = strings.ReplaceAll(text, mention.Key, "")
			}
		}
		ev.Kind, ev.Text, ev.MessageID = push.EventMessage, strings.TrimSpace(text), m.Message.MessageID
		switch m.Message.ChatType {
		case "p2p":
			ev.Type, ev.Address = push.TargetUser, m.Sender.SenderID.OpenID
		case "group", "topic_group":
			if len(m.Message.Mentions) == 0 {
				// A group's message the bot was not mentioned in (the app
				// may read them all): not addressed to it.
				return ev, false
			}
			ev.Type, ev.Address = push.TargetGroup, m.Message.ChatID
		default:
			return ev, false
		}
		return ev, ev.Address != ""
	case eventBotAdded, eventBotDeleted, eventDisbanded:
		var c chatEvent
		if json.Unmarshal(env.Event, &c) != nil || c.ChatID == "" {
			return ev, false
		}
		ev.Type, ev.Address, ev.Name = push.TargetGroup, c.ChatID, c.Name
		switch env.Header.EventType {
		case eventBotAdded:
			ev.Kind = push.EventJoined
		case eventBotDeleted:
			ev.Kind, ev.Text = push.EventLeft, "removed the bot from the group"
		default:
			ev.Kind, ev.Text = push.EventLeft, "was disbanded"
		}
		return ev, true
	case eventP2PEntered:
		var c chatEvent
		if json.Unmarshal(env.Event, &c) != nil || c.OperatorID.OpenID == "" {
			return ev, false
		}
		ev.Kind, ev.Type, ev.Address = push.EventJoined, push.TargetUser, c.OperatorID.OpenID
		return ev, true
	}
	return ev, false
}
