package telegram

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/push"
)

// A Telegram bot hears its users in one of two modes, chosen in its
// config's "receive": "poll" (getUpdates long polling: no public address
// needed) or "webhook" (Telegram pushes updates to the bot's webhook,
// which Herald registers with setWebhook and checks with a secret_token).
// The two exclude each other at Telegram. Bind codes come as /start
// <code> from a t.me deep link (or typed as "bind <code>").

var (
	_ push.EventSource   = (*Provider)(nil)
	_ push.WebhookSetter = (*Provider)(nil)
	_ push.BindLinker    = (*Provider)(nil)
)

// The receive modes of a bot's config.
const (
	receivePoll    = "poll"
	receiveWebhook = "webhook"
)

// allowedUpdates are the update types a bot listens to: messages (bind
// codes, groups upgraded) and my_chat_member (blocked, removed, back).
const allowedUpdates = `["message","my_chat_member"]`

// ReceiveMode implements push.EventSource.
func (p *Provider) ReceiveMode(raw json.RawMessage) push.ReceiveMode {
	cfg, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return push.ReceiveNone
	}
	switch cfg.Receive {
	case receivePoll:
		return push.ReceiveOutbound
	case receiveWebhook:
		return push.ReceiveWebhook
	}
	return push.ReceiveNone
}

// pollTimeout is how long one getUpdates call waits for updates: well
// within the HTTP client's time cap.
func (p *Provider) pollTimeout() int {
	return max(int(p.client.Timeout()/time.Second)/2, 1)
}

// Receive implements push.EventSource: getUpdates long polls from the
// saved offset, each batch handled in order, its replies sent, and the
// next offset (which confirms the batch to Telegram) saved.
func (p *Provider) Receive(ctx context.Context, bot push.Bot, cursor string, sink push.EventSink) error {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return err
	}
	endpoint := p.endpoint(cfg)
	offset, _ := strconv.ParseInt(cursor, 10, 64)
	for ctx.Err() == nil {
		body := map[string]any{"timeout": p.pollTimeout(), "allowed_updates": json.RawMessage(allowedUpdates)}
		if offset > 0 {
			body["offset"] = offset
		}
		resp, err := p.client.PostJSON(ctx, endpoint+"getUpdates", body, http.Header{})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		var ans apiAnswer
		if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil || !ans.OK {
			return fmt.Errorf("getUpdates: %w", classify(resp.Status, ans))
		}
		var updates []update
		if err := json.Unmarshal(ans.Result, &updates); err != nil {
			return fmt.Errorf("getUpdates: an answer that is not a list of updates: %w", err)
		}
		if len(updates) == 0 {
			continue
		}
		for _, u := range updates {
			ev, ok := u.event()
			if ok {
				reply, err := sink.Handle(ctx, ev)
				if err != nil {
					return err
				}
				if reply.Text != "" {
					p.reply(ctx, endpoint, ev.Address, reply.Text)
				}
			}
			offset = max(offset, u.ID+1)
		}
		if err := sink.SaveCursor(ctx, strconv.FormatInt(offset, 10)); err != nil {
			return err
		}
	}
	return nil
}

// reply sends a reply to a chat; a failure is left to the person, who
// may send the code again.
func (p *Provider) reply(ctx context.Context, endpoint, chat, text string) {
	_, _ = p.client.PostJSON(ctx, endpoint+"sendMessage", map[string]any{"chat_id": chatID(chat), "text": text}, http.Header{})
}

func (p *Provider) endpoint(cfg Config) string {
	return botconfig.BaseOr(cfg.APIBase, p.apiBase) + "/bot" + cfg.Token + "/"
}

// webhookSecret is the secret_token of a bot's webhook, derived from its
// token so that nothing more is stored: Telegram sends it with every
// update, and a request without it is refused.
func webhookSecret(token string) string {
	sum := sha256.Sum256([]byte("herald telegram webhook\x00" + token))
	return hex.EncodeToString(sum[:])
}

// SetWebhook implements push.WebhookSetter: setWebhook with the bot's
// secret_token, or deleteWebhook for url "" (the bot polls instead).
func (p *Provider) SetWebhook(ctx context.Context, bot push.Bot, url string) error {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return err
	}
	method, body := "deleteWebhook", map[string]any{}
	if url != "" {
		method = "setWebhook"
		body = map[string]any{"url": url, "secret_token": webhookSecret(cfg.Token), "allowed_updates": json.RawMessage(allowedUpdates)}
	}
	resp, err := p.client.PostJSON(ctx, p.endpoint(cfg)+method, body, http.Header{})
	if err != nil {
		return err
	}
	var ans apiAnswer
	if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil || !ans.OK {
		return fmt.Errorf("%s: %w", method, classify(resp.Status, ans))
	}
	return nil
}

// maxWebhookUpdate caps an update pushed to the webhook.
const maxWebhookUpdate = 1 << 20

// Webhook implements push.EventSource: the secret_token header is checked
// (in constant time) before the body is read; the reply goes back in the
// answer as a sendMessage call, which Telegram makes.
func (p *Provider) Webhook(ctx context.Context, bot push.Bot, req push.WebhookRequest, sink push.EventSink) push.WebhookResponse {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil || req.Method != http.MethodPost {
		return push.WebhookRefused()
	}
	got := req.HeaderValue("X-Telegram-Bot-Api-Secret-Token")
	want := webhookSecret(cfg.Token)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return push.WebhookRefused()
	}
	if len(req.Body) > maxWebhookUpdate {
		return push.WebhookResponse{Status: http.StatusRequestEntityTooLarge}
	}
	var u update
	if err := json.Unmarshal(req.Body, &u); err != nil {
		return push.WebhookResponse{Status: http.StatusBadRequest, ContentType: "text/plain", Body: []byte("not an update\n")}
	}
	ev, ok := u.event()
	if !ok {
		return push.WebhookResponse{Status: http.StatusOK}
	}
	reply, err := sink.Handle(ctx, ev)
	if err != nil {
		// Telegram pushes the update again later.
		return push.WebhookResponse{Status: http.StatusServiceUnavailable, ContentType: "text/plain", Body: []byte("retry later\n")}
	}
	if reply.Text == "" {
		return push.WebhookResponse{Status: http.StatusOK}
	}
	body, _ := json.Marshal(map[string]any{"method": "sendMessage", "chat_id": chatID(ev.Address), "text": reply.Text})
	return push.WebhookResponse{Status: http.StatusOK, ContentType: "application/json", Body: body}
}

// usernames remembers bots' usernames (from getMe) by token.
type usernames struct {
	mu sync.Mutex
	m  map[string]string
}

// BindLink implements push.BindLinker: the t.me deep link that opens the
// bot (a private chat, or for a group code the choice of a group) with
// /start <code>.
func (p *Provider) BindLink(ctx context.Context, bot push.Bot, code string, tt push.TargetType, _ time.Duration) (push.BindLink, error) {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return push.BindLink{}, err
	}
	name, err := p.username(ctx, cfg)
	if err != nil {
		return push.BindLink{}, err
	}
	param := "start"
	if tt == push.TargetGroup {
		param = "startgroup"
	}
	return push.BindLink{URL: "https://t.me/" + name + "?" + param + "=" + code}, nil
}

// username returns a bot's username, asking getMe once per token.
func (p *Provider) username(ctx context.Context, cfg Config) (string, error) {
	p.names.mu.Lock()
	name, ok := p.names.m[cfg.Token]
	p.names.mu.Unlock()
	if ok {
		return name, nil
	}
	resp, err := p.client.PostJSON(ctx, p.endpoint(cfg)+"getMe", map[string]any{}, http.Header{})
	if err != nil {
		return "", err
	}
	var ans apiAnswer
	if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil || !ans.OK {
		return "", classify(resp.Status, ans)
	}
	var me struct {
		Username string `json:"username"`
	}
	if err := json.Unmarshal(ans.Result, &me); err != nil || me.Username == "" {
		return "", fmt.Errorf("getMe: no username in the answer")
	}
	p.names.mu.Lock()
	if p.names.m == nil || len(p.names.m) > 1024 {
		p.names.m = make(map[string]string)
	}
	p.names.m[cfg.Token] = me.Username
	p.names.mu.Unlock()
	return me.Username, nil
}

// update is the part of a Telegram update a bot listens to.
type update struct {
	ID      int64 `json:"update_id"`
	Message *struct {
		MessageID       int64  `json:"message_id"`
		Date            int64  `json:"date"`
		Text            string `json:"text"`
		Chat            chat   `json:"chat"`
		MigrateToChatID int64  `json:"migrate_to_chat_id"`
	} `json:"message"`
	MyChatMember *struct {
		Chat          chat  `json:"chat"`
		Date          int64 `json:"date"`
		NewChatMember struct {
			Status string `json:"status"`
		} `json:"new_chat_member"`
	} `json:"my_chat_member"`
}

type chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Username  string `json:"username"`
}

// target is the type and address of a chat a target binds (ok false for
// a channel, which sends no commands).
func (c chat) target() (push.TargetType, string, bool) {
	switch c.Type {
	case "private":
		return push.TargetUser, strconv.FormatInt(c.ID, 10), true
	case "group", "supergroup":
		return push.TargetGroup, strconv.FormatInt(c.ID, 10), true
	}
	return "", "", false
}

func (c chat) name() string {
	if c.Title != "" {
		return c.Title
	}
	if n := strings.TrimSpace(c.FirstName + " " + c.LastName); n != "" {
		return n
	}
	if c.Username != "" {
		return "@" + c.Username
	}
	return ""
}

// event turns an update into the engine's event (ok false for an update
// that says nothing the engine keeps).
func (u update) event() (push.Event, bool) {
	ev := push.Event{ID: strconv.FormatInt(u.ID, 10)}
	switch {
	case u.Message != nil:
		m := u.Message
		tt, addr, ok := m.Chat.target()
		if !ok {
			return ev, false
		}
		ev.Type, ev.Address, ev.Name, ev.At = tt, addr, m.Chat.name(), time.Unix(m.Date, 0)
		if m.MigrateToChatID != 0 {
			ev.Kind, ev.NewAddress = push.EventMoved, strconv.FormatInt(m.MigrateToChatID, 10)
			return ev, true
		}
		ev.Kind, ev.Text, ev.MessageID = push.EventMessage, m.Text, strconv.FormatInt(m.MessageID, 10)
		return ev, true
	case u.MyChatMember != nil:
		m := u.MyChatMember
		tt, addr, ok := m.Chat.target()
		if !ok {
			return ev, false
		}
		ev.Type, ev.Address, ev.Name, ev.At = tt, addr, m.Chat.name(), time.Unix(m.Date, 0)
		switch m.NewChatMember.Status {
		case "kicked", "left":
			ev.Kind, ev.Text = push.EventLeft, "removed the bot from the group"
			if tt == push.TargetUser {
				ev.Text = "blocked the bot"
			}
		default:
			ev.Kind = push.EventJoined
		}
		return ev, true
	}
	return ev, false
}
