// Package telegram sends messages through the Telegram Bot API:
// sendMessage for text and Markdown (converted to parse_mode HTML) and
// sendPhoto for images, by URL first and, when Telegram cannot fetch the
// URL, by uploading the downloaded image.
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

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
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
// "api_base": "<optional Bot API server URL>", "receive": "poll" |
// "webhook" (optional: how the bot hears its users; none by default)}.
type Config struct {
	Token   string `json:"token"`
	APIBase string `json:"api_base,omitempty"`
	Receive string `json:"receive,omitempty"`
}

// Options configure the provider.
type Options struct {
	// APIBase replaces DefaultAPIBase for bots whose config has none.
	APIBase string
}

// Provider is the Telegram push.Platform.
type Provider struct {
	client  *httpcall.Client
	images  *imagefetch.Fetcher
	pacer   *pacing.Pacer
	apiBase string
	tokenRe *regexp.Regexp // digits, a colon, a secret of 30+ URL-safe characters
	userRe  *regexp.Regexp // a public @username
	configs botconfig.Cache[Config]
	names   usernames
}

var (
	_ push.Platform     = (*Provider)(nil)
	_ push.PaceReleaser = (*Provider)(nil)
)

// New returns the Telegram provider on env's HTTP client, image fetcher
// and pacer (for a nil env, see platforms.Env).
func New(env *platforms.Env, opts Options) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		client:  d.Client,
		images:  d.Images,
		pacer:   d.Pacer,
		apiBase: botconfig.BaseOr(opts.APIBase, DefaultAPIBase),
		tokenRe: regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{30,100}$`),
		userRe:  regexp.MustCompile(`^@[A-Za-z][A-Za-z0-9_]{3,31}$`),
	}
}

// Info implements push.Platform.
func (p *Provider) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser, push.TargetGroup}}
}

const configShape = `{"token": "<bot token>", "api_base": "<optional Bot API URL>", "receive": "<optional: poll or webhook>"}`

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
	if c.Receive != "" && c.Receive != receivePoll && c.Receive != receiveWebhook {
		return c, botconfig.Malformed("telegram", "receive", `how the bot hears its users: "poll" (getUpdates, no public address needed) or "webhook"`)
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
// fit in 1024, both counted as Telegram counts them (UTF-16 units after
// entities are parsed).
func (p *Provider) ValidateMessage(m push.Message, _ push.TargetType) error {
	switch m.Type {
	case push.MsgTypeMarkdown:
		html := MarkdownToHTML(m.Content)
		n := VisibleLength(html)
		if strings.TrimSpace(html) == "" || n == 0 {
			return push.Errorf(push.Invalid, "empty_message", "the Markdown renders to an empty Telegram message")
		}
		if n > MaxText {
			return push.Errorf(push.Invalid, "content_too_long", "the Markdown renders to %d characters; Telegram's limit is %d", n, MaxText)
		}
	case push.MsgTypeText:
		if n := utf16Len(m.Content); n > MaxText {
			return push.Errorf(push.Invalid, "content_too_long", "the text is %d UTF-16 units long; Telegram's limit is %d", n, MaxText)
		}
	case push.MsgTypeImage:
		// Herald downloads the photo itself when Telegram cannot fetch it.
		if err := p.images.CheckURL(m.ImageURL); err != nil {
			return err
		}
		if n := utf16Len(m.Content); n > MaxCaption {
			return push.Errorf(push.Invalid, "caption_too_long", "the image caption is %d characters long; Telegram's limit for captions is %d", n, MaxCaption)
		}
	}
	return nil
}

// Pace implements push.Pacer with Telegram's published limits: about one
// message a second to a private chat, 20 a minute to a group, 30 a second
// for a bot in all.
func (p *Provider) Pace(d push.Delivery) time.Duration { return p.pacer.Reserve(p.paceLimits(d)...) }

// ReleasePace implements push.PaceReleaser.
func (p *Provider) ReleasePace(d push.Delivery) { p.pacer.Release(p.paceLimits(d)...) }

// paceLimits are the limits a send of d is paced by (none without a
// pacer or with a config that cannot be read: Send reports it).
func (p *Provider) paceLimits(d push.Delivery) []pacing.Limit {
	if p.pacer == nil {
		return nil
	}
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return nil
	}
	bot := "telegram:" + tokencache.Key(c.Token)
	chat := pacing.Rate{Every: time.Second, Burst: 1}
	if d.Target.Type == push.TargetGroup {
		chat = pacing.Rate{Every: 4 * time.Second, Burst: 4} // 4 + 60/4 = 19 in any minute
	}
	return []pacing.Limit{
		{Key: bot, Rate: pacing.Rate{Every: 50 * time.Millisecond, Burst: 8}}, // 8 + 20 = 28 in any second
		{Key: bot + ":" + d.Target.Address, Rate: chat},
	}
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

// photoTypes are the image formats sendPhoto takes as an upload.
func photoTypes() []string {
	return []string{"image/jpeg", "image/png", "image/webp", "image/gif", "image/bmp"}
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	cfg, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	endpoint := botconfig.BaseOr(cfg.APIBase, p.apiBase) + "/bot" + cfg.Token + "/"
	body := map[string]any{"chat_id": chatID(d.Target.Address)}
	method := "sendMessage"
	switch d.Message.Type {
	case push.MsgTypeImage:
		method = "sendPhoto"
		body["photo"] = d.Message.ImageURL
		if d.Message.Content != "" {
			body["caption"] = d.Message.Content
		}
	case push.MsgTypeMarkdown:
		body["text"] = MarkdownToHTML(d.Message.Content)
		body["parse_mode"] = "HTML"
	default:
		body["text"] = d.Message.Content
	}
	resp, err := p.client.PostJSON(ctx, endpoint+method, body, http.Header{})
	if err != nil {
		return push.Receipt{}, err
	}
	receipt, err := p.read(resp, d)
	if err != nil && d.Message.Type == push.MsgTypeImage && urlRefused(err) {
		// Telegram could not fetch the URL and sent nothing: upload the
		// image ourselves.
		return p.uploadPhoto(ctx, endpoint, d, err)
	}
	return receipt, err
}

// urlRefused reports whether Telegram refused a photo because it could
// not fetch it from its URL (so that an upload may work).
func urlRefused(err error) bool {
	se := push.AsSendError(err)
	if se.Outcome != push.OutcomeDefinitive || se.Code != "400" {
		return false
	}
	for _, s := range []string{"failed to get HTTP URL content", "wrong type of the web page content", "wrong file identifier/HTTP URL specified"} {
		if strings.Contains(se.Message, s) {
			return true
		}
	}
	return false
}

// uploadPhoto downloads the image and sends it as a multipart upload.
func (p *Provider) uploadPhoto(ctx context.Context, endpoint string, d push.Delivery, byURL error) (push.Receipt, error) {
	img, err := p.images.Fetch(ctx, d.Message.ImageURL, photoTypes()...)
	if err != nil {
		se := push.AsSendError(err)
		return push.Receipt{}, &push.SendError{Outcome: se.Outcome, Code: se.Code, RetryAfter: se.RetryAfter, Err: se,
			Message: fmt.Sprintf("%s; then downloading the image to upload it failed: %s", push.AsSendError(byURL).Error(), se.Message)}
	}
	fields := [][2]string{{"chat_id", d.Target.Address}}
	if d.Message.Content != "" {
		fields = append(fields, [2]string{"caption", d.Message.Content})
	}
	file := httpcall.File{Field: "photo", Filename: img.Filename, ContentType: img.ContentType, Data: img.Data}
	resp, err := p.client.PostFile(ctx, endpoint+"sendPhoto", fields, file, nil)
	if err != nil {
		return push.Receipt{}, err
	}
	return p.read(resp, d)
}

// read turns a Bot API answer into a receipt or a classified error.
func (p *Provider) read(resp *httpcall.Response, d push.Delivery) (push.Receipt, error) {
	var ans apiAnswer
	if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil {
		if resp.Status >= 500 {
			return push.Receipt{}, httpcall.GatewayFailure(resp)
		}
		if resp.Status >= 200 && resp.Status < 300 {
			return push.Receipt{}, httpcall.Unreadable(resp, jerr)
		}
		return push.Receipt{}, push.DefinitiveError(strconv.Itoa(resp.Status), "HTTP %d with a body that is not the Bot API's: check api_base", resp.Status)
	}
	if ans.OK {
		var msg struct {
			MessageID int64 `json:"message_id"`
		}
		if err := json.Unmarshal(ans.Result, &msg); err != nil || msg.MessageID == 0 {
			return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("no message_id in the result"))
		}
		// message_id is unique only within its chat.
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
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: codeStr, Message: desc, RetryAfter: wait}
	case code >= 500:
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: codeStr, Message: desc}
	case ans.Parameters != nil && ans.Parameters.MigrateToChatID != 0:
		return push.DefinitiveError(codeStr, "%s: the group was upgraded to a supergroup whose chat id is %d: bind %d as the target (nothing was sent to the old chat)",
			desc, ans.Parameters.MigrateToChatID, ans.Parameters.MigrateToChatID)
	case code == http.StatusUnauthorized:
		return push.DefinitiveError(codeStr, "%s: the bot token was refused: check the bot's token", desc)
	default:
		return push.DefinitiveError(codeStr, "%s", desc)
	}
}
