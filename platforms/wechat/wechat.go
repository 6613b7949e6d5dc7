// Package wechat sends customer-service messages (客服消息) through a WeChat
// Official Account: an access token from /cgi-bin/stable_token (cached, one
// per account), text, Markdown rendered to plain text with links kept as
// <a> tags, and images downloaded, uploaded as temporary media and sent by
// media_id. Official Accounts have no group chats, so only user targets
// (openids) can be bound.
package wechat

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/mdtext"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/platforms/internal/wxcrypt"
	"github.com/heraldpush/herald/push"
)

// DefaultAPIBase is WeChat's API host (also the token host by default).
const DefaultAPIBase = "https://api.weixin.qq.com"

// MaxText is the most bytes (UTF-8) of text one customer-service message
// carries.
const MaxText = 2048

// Token endpoints.
const (
	TokenStable  = "stable"  // POST /cgi-bin/stable_token (default)
	TokenClassic = "classic" // GET /cgi-bin/token
)

// Config is a WeChat Official Account bot's configuration.
type Config struct {
	// AppID is the Official Account's AppID (wx + 16 characters).
	AppID string `json:"app_id"`
	// AppSecret is the Official Account's AppSecret.
	AppSecret string `json:"app_secret"`
	// APIBase replaces the API host (proxies, tests).
	APIBase string `json:"api_base,omitempty"`
	// TokenBase replaces the token host (default: APIBase).
	TokenBase string `json:"token_base,omitempty"`
	// TokenAPI is "stable" (default: /cgi-bin/stable_token, whose token is
	// shared safely by several servers) or "classic" (/cgi-bin/token,
	// which invalidates the previous token on every call).
	TokenAPI string `json:"token_api,omitempty"`
	// Token is the server configuration's Token (服务器配置, 3 to 32
	// letters or digits): with it, the bot hears its followers at its
	// webhook, /api/hooks/{bot}, which is the server URL to give WeChat.
	Token string `json:"token,omitempty"`
	// EncodingAESKey is the server configuration's EncodingAESKey (43
	// letters or digits), for the compatible and safe modes; without it
	// the account must use the plaintext mode.
	EncodingAESKey string `json:"encoding_aes_key,omitempty"`
}

const configShape = `{"app_id": "<AppID>", "app_secret": "<AppSecret>", "api_base": "<optional API URL>", "token_base": "<optional token URL>", "token_api": "stable|classic", ` +
	`"token": "<optional callback Token>", "encoding_aes_key": "<optional callback EncodingAESKey>"}`

// Provider is the WeChat Official Account push.Platform.
type Provider struct {
	client   *httpcall.Client
	tokens   *tokencache.Cache
	images   *imagefetch.Fetcher
	configs  botconfig.Cache[Config]
	appIDRe  *regexp.Regexp
	secretRe *regexp.Regexp
	openIDRe *regexp.Regexp
	tokenRe  *regexp.Regexp
}

var _ push.Platform = (*Provider)(nil)

// New returns the WeChat provider on env's HTTP client, token cache and
// image fetcher (for a nil env, see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		client:   d.Client,
		tokens:   d.Tokens,
		images:   d.Images,
		appIDRe:  regexp.MustCompile(`^wx[0-9A-Za-z]{16}$`),
		secretRe: regexp.MustCompile(`^[0-9A-Za-z]{32}$`),
		openIDRe: regexp.MustCompile(`^[A-Za-z0-9_-]{6,64}$`),
		tokenRe:  regexp.MustCompile(`^[A-Za-z0-9]{3,32}$`),
	}
}

// Info implements push.Platform: users only.
func (p *Provider) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser}}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("wechat", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.AppID == "":
		return c, botconfig.Missing("wechat", "app_id", "the Official Account's AppID (developer settings)")
	case !p.appIDRe.MatchString(c.AppID):
		return c, botconfig.Malformed("wechat", "app_id", "an AppID is wx followed by 16 letters or digits")
	case c.AppSecret == "":
		return c, botconfig.Missing("wechat", "app_secret", "the Official Account's AppSecret (developer settings)")
	case !p.secretRe.MatchString(c.AppSecret):
		return c, botconfig.Malformed("wechat", "app_secret", "an AppSecret is 32 letters or digits")
	case c.TokenAPI != "" && c.TokenAPI != TokenStable && c.TokenAPI != TokenClassic:
		return c, botconfig.Malformed("wechat", "token_api", `use "stable" (/cgi-bin/stable_token, the default) or "classic" (/cgi-bin/token)`)
	case c.Token != "" && !p.tokenRe.MatchString(c.Token):
		return c, botconfig.Malformed("wechat", "token", "the server configuration's Token is 3 to 32 letters or digits")
	case c.EncodingAESKey != "" && c.Token == "":
		return c, botconfig.Missing("wechat", "token", "the server configuration's Token, which an encoding_aes_key goes with")
	case c.EncodingAESKey != "" && !wxcrypt.ValidKey(c.EncodingAESKey):
		return c, botconfig.Malformed("wechat", "encoding_aes_key", "the server configuration's EncodingAESKey is 43 letters or digits")
	}
	if err := botconfig.BaseURL("wechat", "api_base", c.APIBase); err != nil {
		return c, err
	}
	return c, botconfig.BaseURL("wechat", "token_base", c.TokenBase)
}

func (c Config) apiBase() string {
	return botconfig.BaseOr(c.APIBase, DefaultAPIBase)
}

func (c Config) tokenBase() string {
	return botconfig.BaseOr(c.TokenBase, c.apiBase())
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateTarget implements push.Platform: a user's openid for this
// Official Account; groups do not exist on Official Accounts.
func (p *Provider) ValidateTarget(_ json.RawMessage, t push.Target) error {
	if t.Type != push.TargetUser {
		return push.Errorf(push.Invalid, "unsupported_target_type",
			"a wechat Official Account cannot send to groups: customer-service messages go to one follower at a time; bind each user's openid as a user target")
	}
	if !p.openIDRe.MatchString(t.Address) {
		return push.Errorf(push.Invalid, "invalid_address", "a wechat user target is the follower's openid for this Official Account, e.g. oLVPpjqs9BhvzwPj5A-vTYAX3GLc (got %q)", t.Address)
	}
	return nil
}

// ValidateMessage implements push.Platform: text, the plain text a
// Markdown message renders to, and an image's caption each fit in one
// message of 2048 bytes.
func (p *Provider) ValidateMessage(m push.Message, tt push.TargetType) error {
	if tt == push.TargetGroup {
		return push.Errorf(push.Invalid, "unsupported_target_type", "a wechat Official Account cannot send to groups")
	}
	var body, what string
	switch m.Type {
	case push.MsgTypeMarkdown:
		body, what = RenderMarkdown(m.Content), "the Markdown renders to a text that"
		if strings.TrimSpace(body) == "" {
			return push.Errorf(push.Invalid, "empty_message", "the Markdown renders to an empty WeChat text")
		}
	case push.MsgTypeImage:
		if err := p.images.CheckURL(m.ImageURL); err != nil {
			return err
		}
		body, what = m.Content, "the image caption (sent as a text before the image)"
	default:
		body, what = m.Content, "the text"
	}
	if n := len(body); n > MaxText {
		return push.Errorf(push.Invalid, "content_too_long",
			"%s is %d bytes long in UTF-8; a WeChat customer-service message takes at most %d bytes: shorten it or split it into several messages", what, n, MaxText)
	}
	return nil
}

// RenderMarkdown turns Markdown into the plain text a WeChat text message
// shows: markup removed, links kept as <a href> tags, which WeChat shows
// as tappable links.
func RenderMarkdown(md string) string {
	return mdtext.Render(md, anchor)
}

func anchor(label, url string) string {
	if label == "" || label == url {
		return url
	}
	return `<a href="` + strings.ReplaceAll(url, `"`, "%22") + `">` + label + `</a>`
}
