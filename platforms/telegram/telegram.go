// Package telegram sends messages through the Telegram Bot API:
// sendMessage for text and Markdown (converted to parse_mode HTML) and
// sendPhoto for images.
package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// DefaultAPIBase is the Bot API server.
const DefaultAPIBase = "https://api.telegram.org"

// Telegram's limits, counted after entity parsing in UTF-16 code units.
const (
	MaxText    = 4096
	MaxCaption = 1024
)

// Config is a Telegram bot's configuration: {"token": "<bot token>",
// "api_base": "<optional Bot API server URL>"}.
type Config struct {
	Token   string `json:"token"`
	APIBase string `json:"api_base,omitempty"`
}

// Options configure the provider.
type Options struct {
	// Client is the shared HTTP client policy (default: httpcall.New).
	Client *httpcall.Client
	// APIBase replaces DefaultAPIBase for bots whose config has none.
	APIBase string
}

// Provider is the Telegram push.Platform.
type Provider struct {
	client  *httpcall.Client
	apiBase string
	tokenRe *regexp.Regexp // digits, a colon, a secret of 30+ URL-safe characters
	userRe  *regexp.Regexp // a public @username
}

var _ push.Platform = (*Provider)(nil)

// New returns the Telegram provider.
func New(opts Options) *Provider {
	if opts.Client == nil {
		opts.Client = httpcall.New(httpcall.Options{})
	}
	if opts.APIBase == "" {
		opts.APIBase = DefaultAPIBase
	}
	return &Provider{
		client:  opts.Client,
		apiBase: strings.TrimRight(opts.APIBase, "/"),
		tokenRe: regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{30,100}$`),
		userRe:  regexp.MustCompile(`^@[A-Za-z][A-Za-z0-9_]{3,31}$`),
	}
}

// Info implements push.Platform.
func (p *Provider) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser, push.TargetGroup}}
}

const configShape = `{"token": "<bot token>", "api_base": "<optional Bot API URL>"}`

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("telegram", raw, &c, configShape); err != nil {
		return c, err
	}
	if c.Token == "" {
		return c, botconfig.Missing("telegram", "token", "the bot token from @BotFather")
	}
	if !p.tokenRe.MatchString(c.Token) {
		return c, botconfig.Malformed("telegram", "token", "a bot token looks like 123456789:AA… (digits, a colon, then at least 30 letters, digits, '_' or '-')")
	}
	return c, botconfig.BaseURL("telegram", "api_base", c.APIBase)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateTarget implements push.Platform: a user is a positive chat id; a
// group is a negative chat id or a public @username.
func (p *Provider) ValidateTarget(_ json.RawMessage, t push.Target) error {
	id, err := strconv.ParseInt(t.Address, 10, 64)
	switch {
	case t.Type == push.TargetUser && (err != nil || id <= 0):
		return push.Errorf(push.Invalid, "invalid_address", "a telegram user target is the user's chat id, a positive number (got %q)", t.Address)
	case t.Type == push.TargetGroup && err == nil && id >= 0:
		return push.Errorf(push.Invalid, "invalid_address", "a telegram group chat id is negative, e.g. -1001234567890 (got %q)", t.Address)
	case t.Type == push.TargetGroup && err != nil && !p.userRe.MatchString(t.Address):
		return push.Errorf(push.Invalid, "invalid_address", "a telegram group target is a negative chat id or a public @username (got %q)", t.Address)
	}
	return nil
}

// ValidateMessage implements push.Platform: Markdown must still be a
// non-empty text within 4096 characters once converted, and a caption must
// fit in 1024.
func (p *Provider) ValidateMessage(m push.Message, _ push.TargetType) error {
	switch m.Type {
	case push.Markdown:
		html := MarkdownToHTML(m.Content)
		n := VisibleLength(html)
		if strings.TrimSpace(html) == "" {
			return push.Errorf(push.Invalid, "empty_message", "the Markdown renders to an empty Telegram message")
		}
		if n > MaxText {
			return push.Errorf(push.Invalid, "content_too_long", "the Markdown renders to %d characters; Telegram's limit is %d", n, MaxText)
		}
	case push.Text:
		if n := utf16Len(m.Content); n > MaxText {
			return push.Errorf(push.Invalid, "content_too_long", "the text is %d UTF-16 units long; Telegram's limit is %d", n, MaxText)
		}
	case push.Image:
		if n := utf16Len(m.Content); n > MaxCaption {
			return push.Errorf(push.Invalid, "caption_too_long", "the image caption is %d characters long; Telegram's limit for captions is %d", n, MaxCaption)
		}
	}
	return nil
}

// apiAnswer is the Bot API's envelope.
type apiAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// chatID is sent as a number when the address is numeric, else as the
// @username string.
func chatID(addr string) any {
	if id, err := strconv.ParseInt(addr, 10, 64); err == nil {
		return id
	}
	return addr
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	cfg, err := p.parseConfig(d.Bot.Config)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	base := p.apiBase
	if cfg.APIBase != "" {
		base = strings.TrimRight(cfg.APIBase, "/")
	}
	method := "sendMessage"
	body := map[string]any{"chat_id": chatID(d.Target.Address)}
	switch d.Message.Type {
	case push.Image:
		method = "sendPhoto"
		body["photo"] = d.Message.ImageURL
		if d.Message.Content != "" {
			body["caption"] = d.Message.Content
		}
	case push.Markdown:
		body["text"] = MarkdownToHTML(d.Message.Content)
		body["parse_mode"] = "HTML"
	default:
		body["text"] = d.Message.Content
	}
	resp, err := p.client.PostJSON(ctx, base+"/bot"+cfg.Token+"/"+method, body, http.Header{})
	if err != nil {
		return push.Receipt{}, err
	}
	var ans apiAnswer
	if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil {
		if resp.Status >= 500 {
			return push.Receipt{}, httpcall.GatewayFailure(resp)
		}
		if resp.Status >= 200 && resp.Status < 300 {
			return push.Receipt{}, httpcall.Unreadable(resp, jerr)
		}
		return push.Receipt{}, push.DefinitiveError(strconv.Itoa(resp.Status), "telegram answered HTTP %d with a body that is not the Bot API's", resp.Status)
	}
	if ans.OK {
		var msg struct {
			MessageID int64 `json:"message_id"`
		}
		if err := json.Unmarshal(ans.Result, &msg); err != nil || msg.MessageID == 0 {
			return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("no message_id in the result"))
		}
		return push.Receipt{PlatformIndex: d.Target.Address + ":" + strconv.FormatInt(msg.MessageID, 10)}, nil
	}
	return push.Receipt{}, classify(resp.Status, ans)
}

// classify maps a Bot API error to an outcome.
func classify(status int, ans apiAnswer) error {
	code := ans.ErrorCode
	if code == 0 {
		code = status
	}
	desc := ans.Description
	if desc == "" {
		desc = http.StatusText(code)
	}
	codeStr := strconv.Itoa(code)
	switch {
	case code == http.StatusTooManyRequests:
		wait := time.Second
		if ans.Parameters != nil && ans.Parameters.RetryAfter > 0 {
			wait = time.Duration(ans.Parameters.RetryAfter) * time.Second
		}
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: codeStr, Message: "telegram: " + desc, RetryAfter: wait}
	case code >= 500:
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: codeStr, Message: "telegram: " + desc}
	case ans.Parameters != nil && ans.Parameters.MigrateToChatID != 0:
		return push.DefinitiveError(codeStr, "telegram: %s: the group became a supergroup with chat id %d: bind that id as the target", desc, ans.Parameters.MigrateToChatID)
	case code == http.StatusUnauthorized:
		return push.DefinitiveError(codeStr, "telegram: %s: the bot token was refused: check the bot's token", desc)
	default:
		return push.DefinitiveError(codeStr, "telegram: %s", desc)
	}
}
