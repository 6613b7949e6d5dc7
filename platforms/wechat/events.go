package wechat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/wxcrypt"
	"github.com/heraldpush/herald/push"
)

// An Official Account hears its followers at its webhook only (WeChat has
// no outbound mode): the account's server configuration (服务器配置) names
// Herald's /api/hooks/{bot} as its URL with the bot's token (and, for the
// compatible and safe modes, its EncodingAESKey). Every request is
// signed with the token; in safe mode the message is encrypted and the
// passive reply is sent back encrypted. Bind codes come typed ("bind
// <code>") or in the scene of a parametric QR code, whose scan follows
// the account and binds in one step.

var (
	_ push.EventSource = (*Provider)(nil)
	_ push.BindLinker  = (*Provider)(nil)
)

// ReceiveMode implements push.EventSource: a bot with the server
// configuration's token hears its followers at its webhook.
func (p *Provider) ReceiveMode(raw json.RawMessage) push.ReceiveMode {
	cfg, err := p.configs.Get(raw, p.parseConfig)
	if err != nil || cfg.Token == "" {
		return push.ReceiveNone
	}
	return push.ReceiveWebhook
}

// Receive implements push.EventSource: an Official Account has no
// outbound mode.
func (p *Provider) Receive(context.Context, push.Bot, string, push.EventSink) error {
	return errors.New("a wechat Official Account hears its followers at its webhook only")
}

// Webhook implements push.EventSource. The signature over the token, the
// timestamp and the nonce is checked (in constant time, the timestamp
// within a window) before anything else; in safe mode the message
// signature over the ciphertext too, before it is decrypted. A bot with
// an EncodingAESKey takes encrypted messages only, since the signature of
// a plaintext message does not cover its body. GET is WeChat's URL check,
// answered with its echostr. A passive reply goes back in the answer, as
// WeChat requires (within 5 s), encrypted in safe mode.
func (p *Provider) Webhook(ctx context.Context, bot push.Bot, req push.WebhookRequest, sink push.EventSink) push.WebhookResponse {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil || cfg.Token == "" {
		return push.WebhookRefused()
	}
	now := p.tokens.Now()
	ts, nonce := req.QueryValue("timestamp"), req.QueryValue("nonce")
	if !wxcrypt.Verify(req.QueryValue("signature"), cfg.Token, ts, nonce) || !wxcrypt.Fresh(ts, now) {
		return push.WebhookRefused()
	}
	switch req.Method {
	case http.MethodGet:
		echo := req.QueryValue("echostr")
		if echo == "" || len(echo) > 256 {
			return badRequest("a URL check without its echostr")
		}
		return push.WebhookResponse{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: []byte(echo)}
	case http.MethodPost:
	default:
		return push.WebhookRefused()
	}
	if len(req.Body) > wxcrypt.MaxBody {
		return push.WebhookResponse{Status: http.StatusRequestEntityTooLarge, ContentType: "text/plain", Body: []byte("the body is larger than an event\n")}
	}
	var key []byte
	if cfg.EncodingAESKey != "" {
		key, _ = wxcrypt.Key(cfg.EncodingAESKey)
	}
	safe := req.QueryValue("encrypt_type") == "aes"
	if safe != (key != nil) {
		// Encrypted for a bot without a key, or plaintext for one that
		// has a key: the account's mode is not the bot's.
		return push.WebhookRefused()
	}
	msg, err := wxcrypt.Parse(req.Body)
	if err != nil {
		return badRequest("the body is not WeChat's XML")
	}
	if safe {
		if msg.Encrypt == "" || !wxcrypt.Verify(req.QueryValue("msg_signature"), cfg.Token, ts, nonce, msg.Encrypt) {
			return push.WebhookRefused()
		}
		plain, err := wxcrypt.Decrypt(key, msg.Encrypt, cfg.AppID)
		if err != nil {
			return push.WebhookRefused()
		}
		if msg, err = wxcrypt.Parse(plain); err != nil {
			return badRequest("the decrypted message is not WeChat's XML")
		}
	}
	var reply string
	for _, ev := range events(msg) {
		r, err := sink.Handle(ctx, ev)
		if err != nil {
			// WeChat sends the message again.
			return push.WebhookResponse{Status: http.StatusServiceUnavailable, ContentType: "text/plain", Body: []byte("retry later\n")}
		}
		if r.Text != "" {
			reply = r.Text
		}
	}
	if reply == "" {
		// "success" tells WeChat that no reply comes.
		return push.WebhookResponse{Status: http.StatusOK, ContentType: "text/plain", Body: []byte("success")}
	}
	out := wxcrypt.TextReply(msg.FromUserName, msg.ToUserName, reply, now)
	if safe {
		if out, err = wxcrypt.Seal(cfg.Token, key, cfg.AppID, out, now); err != nil {
			return push.WebhookResponse{Status: http.StatusOK, ContentType: "text/plain", Body: []byte("success")}
		}
	}
	return push.WebhookResponse{Status: http.StatusOK, ContentType: "application/xml; charset=utf-8", Body: out}
}

func badRequest(why string) push.WebhookResponse {
	return push.WebhookResponse{Status: http.StatusBadRequest, ContentType: "text/plain", Body: []byte(why + "\n")}
}

// scenePrefix marks the scene of a parametric QR code in the EventKey of
// the subscribe event its scan causes.
const scenePrefix = "qrscene_"

// events turns a message of WeChat into the engine's events: a text
// message; a follow (with a QR code's scene: the follow and its bind
// code); the scan of a QR code by a follower (its bind code); an
// unfollow. Events have no id, so theirs is the follower and the time.
func events(m wxcrypt.Message) []push.Event {
	if m.FromUserName == "" {
		return nil
	}
	base := push.Event{Type: push.TargetUser, Address: m.FromUserName, At: time.Unix(m.CreateTime, 0)}
	evID := "ev:" + m.FromUserName + ":" + strconv.FormatInt(m.CreateTime, 10) + ":"
	switch m.MsgType {
	case "text":
		ev := base
		ev.ID, ev.Kind, ev.Text, ev.MessageID = "msg:"+m.MsgID, push.EventMessage, m.Content, m.MsgID
		if m.MsgID == "" {
			ev.ID = evID + "text"
		}
		return []push.Event{ev}
	case "event":
	default:
		return nil
	}
	switch strings.ToLower(m.Event) {
	case "subscribe":
		joined := base
		joined.ID, joined.Kind = evID+"subscribe", push.EventJoined
		out := []push.Event{joined}
		if scene, ok := strings.CutPrefix(m.EventKey, scenePrefix); ok && scene != "" {
			out = append(out, bindEvent(base, evID+"subscribe:bind", scene))
		}
		return out
	case "scan":
		if m.EventKey == "" {
			return nil
		}
		return []push.Event{bindEvent(base, evID+"scan", m.EventKey)}
	case "unsubscribe":
		left := base
		left.ID, left.Kind, left.Text = evID+"unsubscribe", push.EventLeft, "unfollowed the Official Account"
		return []push.Event{left}
	}
	return nil
}

// bindEvent is the bind command a QR code's scene carries.
func bindEvent(base push.Event, id, scene string) push.Event {
	base.ID, base.Kind, base.Text = id, push.EventMessage, "bind "+scene
	return base
}

// QR codes for bind codes.
const (
	// ShowQRCode shows the image of a parametric QR code by its ticket.
	ShowQRCode = "https://mp.weixin.qq.com/cgi-bin/showqrcode?ticket="
	// maxQRLife is the longest a temporary QR code lasts: 30 days.
	maxQRLife = 30 * 24 * time.Hour
	// errUnauthorized is WeChat's "api unauthorized": an account that is
	// not a verified service account may not create QR codes.
	errUnauthorized = 48001
)

// BindLink implements push.BindLinker: a temporary parametric QR code
// (qrcode/create, QR_STR_SCENE) whose scene is the code, lasting as long
// as the code (30 days at most); scanning it follows the account and
// binds. An account that may not make QR codes (unverified) gets no link:
// its followers type the code.
func (p *Provider) BindLink(ctx context.Context, bot push.Bot, code string, tt push.TargetType, ttl time.Duration) (push.BindLink, error) {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil {
		return push.BindLink{}, err
	}
	if tt == push.TargetGroup || cfg.Token == "" {
		return push.BindLink{}, nil
	}
	ttl = min(max(ttl, time.Minute), maxQRLife)
	body, err := marshal(map[string]any{"expire_seconds": int64(ttl / time.Second), "action_name": "QR_STR_SCENE",
		"action_info": map[string]any{"scene": map[string]string{"scene_str": code}}})
	if err != nil {
		return push.BindLink{}, err
	}
	type qr struct {
		Ticket string `json:"ticket"`
		URL    string `json:"url"`
	}
	var unauthorized bool
	got, err := withToken(ctx, p, cfg, func(ctx context.Context, token string) (qr, error) {
		req, err := http.NewRequest(http.MethodPost, cfg.apiBase()+"/cgi-bin/qrcode/create?access_token="+url.QueryEscape(token), bytes.NewReader(body))
		if err != nil {
			return qr{}, push.DefinitiveError("", "the api_base cannot be requested")
		}
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		resp, err := p.client.Do(ctx, req)
		if err != nil {
			return qr{}, err
		}
		ans, err := decode(resp, p.tokens.Now())
		if err != nil {
			unauthorized = ans.ErrCode == errUnauthorized
			return qr{}, err
		}
		var q qr
		if jerr := json.Unmarshal(resp.Body, &q); jerr != nil || q.Ticket == "" {
			return qr{}, httpcall.Unreadable(resp, errors.New("no ticket in the answer"))
		}
		return q, nil
	})
	if unauthorized {
		return push.BindLink{}, nil
	}
	if err != nil {
		return push.BindLink{}, err
	}
	return push.BindLink{URL: got.URL, QRURL: ShowQRCode + url.QueryEscape(got.Ticket)}, nil
}
