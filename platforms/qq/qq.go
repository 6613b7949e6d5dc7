// Package qq sends messages through the QQ Bot open platform API v2: an app
// access token (cached per app, refreshed early and once more when the API
// refuses it), C2C messages to users and group messages, text (msg_type 0),
// native Markdown (msg_type 2, falling back to plain text when the bot
// lacks the Markdown grant) and images (msg_type 7, after QQ itself fetched
// the image URL through the /files upload).
package qq

import (
	"encoding/json"
	"regexp"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// QQ's hosts.
const (
	DefaultTokenBase = "https://bots.qq.com"
	DefaultAPIBase   = "https://api.sgroup.qq.com"
	SandboxAPIBase   = "https://sandbox.api.sgroup.qq.com"
)

// Config is a QQ bot's configuration.
type Config struct {
	// AppID is the bot's AppID from the QQ bot console (digits, as a
	// string).
	AppID string `json:"app_id"`
	// ClientSecret is the bot's AppSecret.
	ClientSecret string `json:"client_secret"`
	// Sandbox sends through the sandbox API host, which reaches only the
	// sandbox users and groups set in the console.
	Sandbox bool `json:"sandbox,omitempty"`
	// APIBase replaces the API host (proxies, tests).
	APIBase string `json:"api_base,omitempty"`
	// TokenBase replaces the host of the app access token endpoint.
	TokenBase string `json:"token_base,omitempty"`
	// Receive is how the bot hears its users: "gateway" (the default:
	// QQ's WebSocket gateway, no public address needed), "webhook" (QQ
	// calls {public URL}/api/hooks/{bot}, set as the callback URL in the
	// QQ bot console), or "none".
	Receive string `json:"receive,omitempty"`
}

const configShape = `{"app_id": "<AppID>", "client_secret": "<AppSecret>", "sandbox": false, "api_base": "<optional API URL>", "token_base": "<optional token URL>", "receive": "gateway|webhook|none"}`

// Provider is the QQ push.Platform.
type Provider struct {
	client   *httpcall.Client
	tokens   *tokencache.Cache
	configs  botconfig.Cache[Config]
	appIDRe  *regexp.Regexp
	openIDRe *regexp.Regexp
}

var _ push.Platform = (*Provider)(nil)

// New returns the QQ provider on env's HTTP client and token cache (for a
// nil env, see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		client:   d.Client,
		tokens:   d.Tokens,
		appIDRe:  regexp.MustCompile(`^[0-9]{1,20}$`),
		openIDRe: regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`),
	}
}

// Info implements push.Platform: C2C users and groups.
func (p *Provider) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser, push.TargetGroup}}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("qq", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.AppID == "":
		return c, botconfig.Missing("qq", "app_id", "the bot's AppID from the QQ bot console, as a string")
	case !p.appIDRe.MatchString(c.AppID):
		return c, botconfig.Malformed("qq", "app_id", "the AppID is a string of digits, e.g. \"102012345\"")
	case c.ClientSecret == "":
		return c, botconfig.Missing("qq", "client_secret", "the bot's AppSecret from the QQ bot console")
	case !botconfig.Printable(c.ClientSecret) || len(c.ClientSecret) > 256:
		return c, botconfig.Malformed("qq", "client_secret", "the AppSecret is up to 256 printable ASCII characters without spaces")
	case c.Sandbox && c.APIBase != "":
		return c, botconfig.Malformed("qq", "sandbox", "give either sandbox or api_base, not both")
	}
	switch c.Receive {
	case "", receiveGateway, receiveWebhook, receiveNone:
	default:
		return c, botconfig.Malformed("qq", "receive", "receive is \"gateway\" (the default), \"webhook\" or \"none\"")
	}
	if err := botconfig.BaseURL("qq", "api_base", c.APIBase); err != nil {
		return c, err
	}
	return c, botconfig.BaseURL("qq", "token_base", c.TokenBase)
}

// apiBase is the API host the bot sends through.
func (c Config) apiBase() string {
	def := DefaultAPIBase
	if c.Sandbox {
		def = SandboxAPIBase
	}
	return botconfig.BaseOr(c.APIBase, def)
}

// tokenBase is the host of the token endpoint.
func (c Config) tokenBase() string {
	return botconfig.BaseOr(c.TokenBase, DefaultTokenBase)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateTarget implements push.Platform: a user is the user's openid
// for this bot, a group is the group's group_openid; both are opaque ids
// of letters and digits that QQ gives in the events the bot receives.
func (p *Provider) ValidateTarget(_ json.RawMessage, t push.Target) error {
	if !p.openIDRe.MatchString(t.Address) {
		what := "the user's openid"
		if t.Type == push.TargetGroup {
			what = "the group's group_openid"
		}
		return push.Errorf(push.Invalid, "invalid_address", "a qq %s target is %s, letters and digits from the bot's events (got %q)", t.Type, what, t.Address)
	}
	return nil
}

// ValidateMessage implements push.Platform: a wake-up message can only go
// to a user.
func (p *Provider) ValidateMessage(m push.Message, tt push.TargetType) error {
	if m.Wakeup && tt == push.TargetGroup {
		e := push.Errorf(push.Invalid, "wakeup_unsupported",
			"qq sends wake-up messages (wake-up mode) only to users who talked to the bot (C2C), never to groups: send to the group without wake-up mode, or wake up a user target")
		e.Field = push.FieldWakeup
		return e
	}
	return nil
}
