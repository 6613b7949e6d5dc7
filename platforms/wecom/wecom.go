// Package wecom sends messages through WeCom (企业微信) in one of two
// modes, chosen by the bot's config:
//
//   - mode "app" (default): a self-built application sends to members
//     (/cgi-bin/message/send, touser) and to group chats the application
//     created (/cgi-bin/appchat/send, chatid), with an access token per
//     (corp_id, corp_secret) from /cgi-bin/gettoken;
//   - mode "robot": a group robot's webhook (/cgi-bin/webhook/send?key=),
//     which reaches the one group the robot lives in. Such a bot has one
//     target: its group, bound once with the address "robot".
//
// Text is limited to 2048 bytes of UTF-8 (WeCom cuts longer text off
// without saying so), so longer text is refused before anything is
// charged. Markdown is sent as WeCom markdown (images become links).
// Images are downloaded and uploaded as media (app) or sent inline as
// base64 with their MD5 (robot); an image with a caption is sent as a news
// card whose title is the caption and whose picture WeCom loads from the
// image URL.
package wecom

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/mdlinks"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/platforms/internal/wxcrypt"
	"github.com/heraldpush/herald/push"
)

// DefaultAPIBase is WeCom's API server (also the token server).
const DefaultAPIBase = "https://qyapi.weixin.qq.com"

// Limits, in bytes of UTF-8.
const (
	MaxText           = 2048    // text, app and robot
	MaxAppMarkdown    = 2048    // markdown through an app
	MaxRobotMarkdown  = 4096    // markdown through a group robot
	MaxNewsTitle      = 128     // a news card's title (an image's caption)
	MaxRobotImage     = 2 << 20 // raw bytes of a robot image
	MaxDuplicateCheck = 14400   // seconds: WeCom's longest duplicate-check interval
)

// Modes of a WeCom bot.
const (
	ModeApp   = "app"
	ModeRobot = "robot"
)

// RobotAddress is the address of the one target of a group-robot bot.
const RobotAddress = "robot"

// Config is a WeCom bot's configuration.
type Config struct {
	// Mode is "app" (default) or "robot".
	Mode string `json:"mode,omitempty"`
	// CorpID, CorpSecret and AgentID identify an application (mode app).
	CorpID     string `json:"corp_id,omitempty"`
	CorpSecret string `json:"corp_secret,omitempty"`
	AgentID    int64  `json:"agent_id,omitempty"`
	// DuplicateCheckInterval, in seconds (1 to 14400), turns on WeCom's
	// duplicate check for messages to members: a request identical to one
	// sent within the interval is not delivered again. 0 leaves it off.
	DuplicateCheckInterval int `json:"duplicate_check_interval,omitempty"`
	// WebhookKey is the key= of a group robot's webhook URL (mode robot).
	WebhookKey string `json:"webhook_key,omitempty"`
	// APIBase replaces DefaultAPIBase for API calls; TokenBase for the
	// token endpoint (default: APIBase).
	APIBase   string `json:"api_base,omitempty"`
	TokenBase string `json:"token_base,omitempty"`
	// Token and EncodingAESKey are the application's callback settings
	// (接收消息, API receive: up to 32 letters or digits, and 43 letters
	// or digits), mode app: with them, the app hears its members at its
	// webhook, /api/hooks/{bot}, which is the URL to give WeCom.
	Token          string `json:"token,omitempty"`
	EncodingAESKey string `json:"encoding_aes_key,omitempty"`
}

// Options configure the provider.
type Options struct {
	// APIBase replaces DefaultAPIBase for bots whose config has none.
	APIBase string
}

// Provider is the WeCom push.Platform.
type Provider struct {
	client  *httpcall.Client
	tokens  *tokencache.Cache
	images  *imagefetch.Fetcher
	pacer   *pacing.Pacer
	apiBase string
	configs botconfig.Cache[Config]

	corpRe   *regexp.Regexp
	secretRe *regexp.Regexp
	keyRe    *regexp.Regexp
	userRe   *regexp.Regexp
	chatRe   *regexp.Regexp
	tokenRe  *regexp.Regexp
}

var (
	_ push.Platform            = (*Provider)(nil)
	_ push.BotMessageValidator = (*Provider)(nil)
	_ push.PaceReleaser        = (*Provider)(nil)
)

// New returns the WeCom provider on env's HTTP client, token cache, image
// fetcher and pacer (for a nil env, see platforms.Env).
func New(env *platforms.Env, opts Options) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		client:   d.Client,
		tokens:   d.Tokens,
		images:   d.Images,
		pacer:    d.Pacer,
		apiBase:  botconfig.BaseOr(opts.APIBase, DefaultAPIBase),
		corpRe:   regexp.MustCompile(`^[A-Za-z0-9]{4,64}$`),
		secretRe: regexp.MustCompile(`^[A-Za-z0-9_-]{8,128}$`),
		keyRe:    regexp.MustCompile(`^[A-Za-z0-9-]{8,128}$`),
		// A member's UserID: 1 to 64 bytes of letters, digits and _-@.,
		// starting with a letter or digit.
		userRe: regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_@.-]{0,63}$`),
		// An application group chat's chatid: up to 32 letters and digits.
		chatRe: regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`),
		// A callback Token: up to 32 letters and digits.
		tokenRe: regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`),
	}
}

// Info implements push.Platform.
func (p *Provider) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser, push.TargetGroup}}
}

const configShape = `{"corp_id": "<corp ID>", "corp_secret": "<app secret>", "agent_id": <app AgentId>, "token": "<optional callback Token>", "encoding_aes_key": "<callback EncodingAESKey, with token>"} ` +
	`or {"mode": "robot", "webhook_key": "<key= of the group robot's webhook URL>"}`

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("wecom", raw, &c, configShape); err != nil {
		return c, err
	}
	if c.Mode == "" {
		c.Mode = ModeApp
	}
	switch c.Mode {
	case ModeApp:
		if err := p.checkApp(c); err != nil {
			return c, err
		}
	case ModeRobot:
		if err := p.checkRobot(c); err != nil {
			return c, err
		}
	default:
		return c, botconfig.Malformed("wecom", "mode", `use "app" (an application's messages) or "robot" (a group robot's webhook)`)
	}
	if err := botconfig.BaseURL("wecom", "api_base", c.APIBase); err != nil {
		return c, err
	}
	return c, botconfig.BaseURL("wecom", "token_base", c.TokenBase)
}

func (p *Provider) checkApp(c Config) error {
	switch {
	case c.WebhookKey != "":
		return notInMode("webhook_key", ModeRobot)
	case c.CorpID == "":
		return botconfig.Missing("wecom", "corp_id", "the corp ID from the WeCom admin console (My Company → Company Info), e.g. ww0123456789abcdef")
	case !p.corpRe.MatchString(c.CorpID):
		return botconfig.Malformed("wecom", "corp_id", "a corp ID is 4 to 64 letters and digits, e.g. ww0123456789abcdef")
	case c.CorpSecret == "":
		return botconfig.Missing("wecom", "corp_secret", "the application's Secret (App Management → your app)")
	case !p.secretRe.MatchString(c.CorpSecret):
		return botconfig.Malformed("wecom", "corp_secret", "an application secret is 8 to 128 letters, digits, '_' or '-'")
	case c.AgentID == 0:
		return botconfig.Missing("wecom", "agent_id", "the application's AgentId, a number such as 1000002")
	case c.AgentID < 0:
		return botconfig.Malformed("wecom", "agent_id", "an AgentId is a positive number such as 1000002")
	case c.DuplicateCheckInterval < 0 || c.DuplicateCheckInterval > MaxDuplicateCheck:
		return botconfig.Malformed("wecom", "duplicate_check_interval", "give seconds from 1 to 14400, or 0 to leave WeCom's duplicate check off")
	case c.Token != "" && !p.tokenRe.MatchString(c.Token):
		return botconfig.Malformed("wecom", "token", "the callback Token is up to 32 letters or digits")
	case c.Token != "" && c.EncodingAESKey == "":
		return botconfig.Missing("wecom", "encoding_aes_key", "the callback EncodingAESKey (43 letters or digits) from the app's API receive settings: WeCom always encrypts callbacks")
	case c.EncodingAESKey != "" && c.Token == "":
		return botconfig.Missing("wecom", "token", "the callback Token from the app's API receive settings, which the encoding_aes_key goes with")
	case c.EncodingAESKey != "" && !wxcrypt.ValidKey(c.EncodingAESKey):
		return botconfig.Malformed("wecom", "encoding_aes_key", "the callback EncodingAESKey is 43 letters or digits")
	}
	return nil
}

func (p *Provider) checkRobot(c Config) error {
	switch {
	case c.CorpID != "":
		return notInMode("corp_id", ModeApp)
	case c.CorpSecret != "":
		return notInMode("corp_secret", ModeApp)
	case c.AgentID != 0:
		return notInMode("agent_id", ModeApp)
	case c.DuplicateCheckInterval != 0:
		return notInMode("duplicate_check_interval", ModeApp)
	case c.TokenBase != "":
		return notInMode("token_base", ModeApp)
	case c.Token != "":
		return notInMode("token", ModeApp)
	case c.EncodingAESKey != "":
		return notInMode("encoding_aes_key", ModeApp)
	case c.WebhookKey == "":
		return botconfig.Missing("wecom", "webhook_key", "the key= value of the group robot's webhook URL")
	case !p.keyRe.MatchString(c.WebhookKey):
		return botconfig.Malformed("wecom", "webhook_key", "give only the key= value of the webhook URL (letters, digits and '-'), not the whole URL")
	}
	return nil
}

func notInMode(field, mode string) error {
	return push.Errorf(push.Invalid, "invalid_config", "wecom bot config: %s is only used by a bot in mode %q: remove it, or set \"mode\": %q", field, mode, mode)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateTarget implements push.Platform. Through an app, a user is a
// member's UserID and a group is the chatid of a group chat the app
// created. A group-robot bot has one target: its group, with the address
// "robot".
func (p *Provider) ValidateTarget(raw json.RawMessage, t push.Target) error {
	c, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return err
	}
	if c.Mode == ModeRobot {
		if t.Type != push.TargetGroup || t.Address != RobotAddress {
			return push.Errorf(push.Invalid, "invalid_address", "a wecom group-robot bot sends only to the group it lives in: bind that group once, as a group target with the address %q", RobotAddress)
		}
		return nil
	}
	switch t.Type {
	case push.TargetUser:
		if strings.EqualFold(t.Address, "@all") || strings.Contains(t.Address, "|") || !p.userRe.MatchString(t.Address) {
			return push.Errorf(push.Invalid, "invalid_address", "a wecom user target is one member's UserID (1 to 64 letters, digits or _-@., starting with a letter or digit; not @all or a list), got %q", t.Address)
		}
	case push.TargetGroup:
		if !p.chatRe.MatchString(t.Address) {
			return push.Errorf(push.Invalid, "invalid_address", "a wecom group target is the chatid of a group chat created by the app with appchat/create (up to 32 letters and digits), got %q", t.Address)
		}
	}
	return nil
}

// ValidateMessage implements push.Platform: the limits of the mode that
// allows most (Markdown up to the robot's 4096 bytes), for callers that
// have no bot at hand. The engine then calls ValidateBotMessage for an
// app's smaller ones.
func (p *Provider) ValidateMessage(m push.Message, _ push.TargetType) error {
	if m.Type == push.MsgTypeImage {
		if err := p.images.CheckURL(m.ImageURL); err != nil {
			return err
		}
	}
	return checkMessage(m, MaxRobotMarkdown)
}

// ValidateBotMessage implements push.BotMessageValidator: an app's limits,
// in bytes of UTF-8, before anything is charged (called after
// ValidateMessage, which checked the robot's).
func (p *Provider) ValidateBotMessage(raw json.RawMessage, m push.Message, _ push.TargetType) error {
	c, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return err
	}
	if c.Mode == ModeRobot {
		return nil // ValidateMessage checked the robot's limits
	}
	return checkMessage(m, MaxAppMarkdown)
}

func checkMessage(m push.Message, markdownLimit int) error {
	switch m.Type {
	case push.MsgTypeText:
		if n := len(m.Content); n > MaxText {
			return push.Errorf(push.Invalid, "content_too_long", "the text is %d bytes in UTF-8; WeCom takes at most %d bytes per text message and silently cuts off the rest: shorten it or split it into several messages", n, MaxText)
		}
	case push.MsgTypeMarkdown:
		if n := len(markdown(m.Content)); n > markdownLimit {
			return push.Errorf(push.Invalid, "content_too_long", "the Markdown is %d bytes in UTF-8; this WeCom bot takes at most %d bytes per Markdown message: shorten it or split it into several messages", n, markdownLimit)
		}
	case push.MsgTypeImage:
		if n := len(caption(m)); n > MaxNewsTitle {
			return push.Errorf(push.Invalid, "caption_too_long", "the image caption is %d bytes in UTF-8; WeCom shows a captioned image as a news card whose title takes at most %d bytes: shorten the caption or send the image without one", n, MaxNewsTitle)
		}
	}
	return nil
}

// markdown is the Markdown WeCom is sent: images become links, since
// WeCom Markdown cannot show images.
func markdown(src string) string { return mdlinks.ImagesToLinks(src) }

// caption is an image's caption, trimmed.
func caption(m push.Message) string { return strings.TrimSpace(m.Content) }

// Pace implements push.Pacer with WeCom's published limits: an app may
// send a member at most 30 messages a minute and 1000 an hour (excess is
// dropped without an error, so Herald must not exceed them), a member
// receives at most 200 messages a minute from one app in a group chat, and
// a group robot takes 20 messages a minute.
func (p *Provider) Pace(d push.Delivery) time.Duration { return p.pacer.Reserve(p.paceLimits(d)...) }

// ReleasePace implements push.PaceReleaser.
func (p *Provider) ReleasePace(d push.Delivery) { p.pacer.Release(p.paceLimits(d)...) }

// paceLimits are the limits a send of d is paced by.
func (p *Provider) paceLimits(d push.Delivery) []pacing.Limit {
	if p.pacer == nil {
		return nil
	}
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return nil // Send reports the bad config
	}
	if c.Mode == ModeRobot {
		// At most 5 + 60/4 = 20 in any minute.
		return []pacing.Limit{{Key: "wecom:robot:" + tokencache.Key(c.WebhookKey), Rate: pacing.Rate{Every: 4 * time.Second, Burst: 5}}}
	}
	app := "wecom:app:" + tokencache.Key(c.CorpID, c.CorpSecret)
	if d.Target.Type == push.TargetGroup {
		// At most 20 + 60/0.333 = 200 in any minute.
		return []pacing.Limit{{Key: app + ":chat:" + d.Target.Address, Rate: pacing.Rate{Every: time.Minute / 180, Burst: 20}}}
	}
	member := app + ":user:" + strings.ToLower(d.Target.Address)
	return []pacing.Limit{
		// At most 10 + 60/3 = 30 in any minute …
		{Key: member + ":m", Rate: pacing.Rate{Every: 3 * time.Second, Burst: 10}},
		// … and 100 + 3600/4 = 1000 in any hour.
		{Key: member + ":h", Rate: pacing.Rate{Every: 4 * time.Second, Burst: 100}},
	}
}
