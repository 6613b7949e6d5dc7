// Package feishu sends messages through Feishu (飞书) and Lark, which share
// one API on two hosts: a tenant access token per app from
// /open-apis/auth/v3/tenant_access_token/internal, then
// /open-apis/im/v1/messages with the receive_id_type the target declares.
// Text is sent as text, Markdown as an interactive card with a markdown
// element (images become links, since cards show only uploaded images),
// and images are downloaded, uploaded to /open-apis/im/v1/images and sent
// by image_key; an image with a caption is a post with the image and the
// caption.
//
// Every send carries uuid = the job id, so Feishu delivers one job at
// most once an hour whatever is sent. Herald uses that for one safe step:
// when the answer to a send is lost (timeout, connection reset, gateway
// 5xx), the provider re-sends the same request once at once; Feishu either
// delivers it or answers for the message it already has. Only when that
// second request fails too does the job stay uncertain (and, as for every
// platform, it is never sent again automatically).
package feishu

import (
	"encoding/json"
	"regexp"
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

// Hosts of the two domains.
const (
	FeishuBase = "https://open.feishu.cn"
	LarkBase   = "https://open.larksuite.com"
)

// Domains.
const (
	DomainFeishu = "feishu"
	DomainLark   = "lark"
)

// Limits of a message's request body.
const (
	MaxTextBody = 150 << 10 // text
	MaxCardBody = 30 << 10  // interactive card and post
	MaxUUID     = 50
)

// Receive id types.
const (
	OpenID  = "open_id"
	UserID  = "user_id"
	UnionID = "union_id"
	Email   = "email"
	ChatID  = "chat_id"
)

// Config is a Feishu or Lark bot's configuration.
type Config struct {
	AppID     string `json:"app_id"`
	AppSecret string `json:"app_secret"`
	// Domain is "feishu" (open.feishu.cn, default) or "lark"
	// (open.larksuite.com).
	Domain string `json:"domain,omitempty"`
	// APIBase replaces the domain's host for API calls; TokenBase for the
	// token endpoint (default: APIBase).
	APIBase   string `json:"api_base,omitempty"`
	TokenBase string `json:"token_base,omitempty"`
	// Receive is how the bot hears its users: "longconn" (Feishu's long
	// connection, which the bot opens: no public address needed),
	// "webhook" (Feishu posts events to the bot's webhook), or "" (it
	// does not listen).
	Receive string `json:"receive,omitempty"`
	// VerificationToken and EncryptKey are the app's event encryption
	// strategy (Events & Callbacks > Encryption Strategy), for webhook
	// mode: the token is checked on every request; with an encrypt key,
	// requests are signed and encrypted, and the signature is checked.
	VerificationToken string `json:"verification_token,omitempty"`
	EncryptKey        string `json:"encrypt_key,omitempty"`
}

// Options configure the provider.
type Options struct {
	// ResendPause is the wait before re-sending a send whose answer was
	// lost (default 200 ms).
	ResendPause time.Duration
}

// Provider is the Feishu/Lark push.Platform.
type Provider struct {
	client  *httpcall.Client
	tokens  *tokencache.Cache
	images  *imagefetch.Fetcher
	pacer   *pacing.Pacer
	pause   time.Duration
	configs botconfig.Cache[Config]

	appIDRe  *regexp.Regexp
	secretRe *regexp.Regexp
	openRe   *regexp.Regexp // ou_, on_ and oc_ ids
	userRe   *regexp.Regexp
	emailRe  *regexp.Regexp
}

var (
	_ push.Platform     = (*Provider)(nil)
	_ push.PaceReleaser = (*Provider)(nil)
)

// New returns the Feishu/Lark provider on env's HTTP client, token cache,
// image fetcher and pacer (for a nil env, see platforms.Env).
func New(env *platforms.Env, opts Options) *Provider {
	d := shared.FromEnv(env)
	if opts.ResendPause <= 0 {
		opts.ResendPause = 200 * time.Millisecond
	}
	return &Provider{
		client:   d.Client,
		tokens:   d.Tokens,
		images:   d.Images,
		pacer:    d.Pacer,
		pause:    opts.ResendPause,
		appIDRe:  regexp.MustCompile(`^cli_[A-Za-z0-9]{4,64}$`),
		secretRe: regexp.MustCompile(`^[A-Za-z0-9_-]{8,128}$`),
		openRe:   regexp.MustCompile(`^o[unc]_[A-Za-z0-9]{4,64}$`),
		userRe:   regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`),
		emailRe:  regexp.MustCompile(`^[^@\s:]{1,64}@[^@\s:]{1,190}\.[^@\s:]{1,63}$`),
	}
}

// Info implements push.Platform.
func (p *Provider) Info() push.PlatformInfo {
	return push.PlatformInfo{Targets: true, TargetTypes: []push.TargetType{push.TargetUser, push.TargetGroup}}
}

const configShape = `{"app_id": "cli_…", "app_secret": "<app secret>", "domain": "feishu|lark", "receive": "<optional: longconn or webhook>", "verification_token": "<for webhook>", "encrypt_key": "<optional, for webhook>"}`

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("feishu", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.AppID == "":
		return c, botconfig.Missing("feishu", "app_id", "the App ID from the developer console (Credentials & Basic Info), e.g. cli_a1b2c3d4e5f6a7b8")
	case !p.appIDRe.MatchString(c.AppID):
		return c, botconfig.Malformed("feishu", "app_id", "an App ID looks like cli_a1b2c3d4e5f6a7b8")
	case c.AppSecret == "":
		return c, botconfig.Missing("feishu", "app_secret", "the App Secret from the developer console (Credentials & Basic Info)")
	case !p.secretRe.MatchString(c.AppSecret):
		return c, botconfig.Malformed("feishu", "app_secret", "an App Secret is 8 to 128 letters, digits, '_' or '-'")
	}
	switch c.Domain {
	case "", DomainFeishu, DomainLark:
	default:
		return c, botconfig.Malformed("feishu", "domain", `use "feishu" (open.feishu.cn) or "lark" (open.larksuite.com)`)
	}
	if err := botconfig.BaseURL("feishu", "api_base", c.APIBase); err != nil {
		return c, err
	}
	if err := checkReceive(c); err != nil {
		return c, err
	}
	return c, botconfig.BaseURL("feishu", "token_base", c.TokenBase)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// receiver is a target's receive_id_type and receive_id.
type receiver struct{ idType, id string }

// parseAddress reads a target address: "open_id:ou_…", "user_id:…",
// "union_id:on_…", "email:…" or "chat_id:oc_…", or a bare id whose prefix
// says its type (ou_ open_id, on_ union_id, oc_ chat_id).
func (p *Provider) parseAddress(addr string) (receiver, bool) {
	if kind, id, ok := strings.Cut(addr, ":"); ok {
		switch kind {
		case OpenID:
			return receiver{OpenID, id}, strings.HasPrefix(id, "ou_") && p.openRe.MatchString(id)
		case UnionID:
			return receiver{UnionID, id}, strings.HasPrefix(id, "on_") && p.openRe.MatchString(id)
		case ChatID:
			return receiver{ChatID, id}, strings.HasPrefix(id, "oc_") && p.openRe.MatchString(id)
		case UserID:
			return receiver{UserID, id}, p.userRe.MatchString(id)
		case Email:
			return receiver{Email, id}, p.emailRe.MatchString(id)
		}
		return receiver{}, false
	}
	if !p.openRe.MatchString(addr) {
		return receiver{}, false
	}
	switch addr[:3] {
	case "ou_":
		return receiver{OpenID, addr}, true
	case "on_":
		return receiver{UnionID, addr}, true
	default:
		return receiver{ChatID, addr}, true
	}
}

// ValidateTarget implements push.Platform: a user is an open_id (ou_…), a
// union_id (on_…), "user_id:<id>" or "email:<address>"; a group is a
// chat_id (oc_…) of a chat the bot is in. The type may also be written
// out: "open_id:ou_…", "union_id:on_…", "chat_id:oc_…".
func (p *Provider) ValidateTarget(_ json.RawMessage, t push.Target) error {
	r, ok := p.parseAddress(t.Address)
	switch {
	case !ok:
		return push.Errorf(push.Invalid, "invalid_address", "a feishu target is an open_id (ou_…), a union_id (on_…) or a chat_id (oc_…), or a typed id such as user_id:<id> or email:<address>; got %q", t.Address)
	case t.Type == push.TargetGroup && r.idType != ChatID:
		return push.Errorf(push.Invalid, "invalid_address", "a feishu group target is a chat_id (oc_…), got a %s", r.idType)
	case t.Type == push.TargetUser && r.idType == ChatID:
		return push.Errorf(push.Invalid, "invalid_address", "a feishu chat_id (oc_…) is a group: bind it as a group target")
	}
	return nil
}

// ValidateMessage implements push.Platform: the request body limits
// (150 KB of text, 30 KB of card or post).
func (p *Provider) ValidateMessage(m push.Message, _ push.TargetType) error {
	switch m.Type {
	case push.MsgTypeText:
		if n := len(textContent(m.Content)); n > MaxTextBody {
			return push.Errorf(push.Invalid, "content_too_long", "the text is %d bytes as Feishu content; the limit is %d", n, MaxTextBody)
		}
	case push.MsgTypeMarkdown:
		if n := len(cardContent(m.Content)); n > MaxCardBody {
			return push.Errorf(push.Invalid, "content_too_long", "the Markdown card is %d bytes; Feishu takes cards of at most %d", n, MaxCardBody)
		}
	case push.MsgTypeImage:
		if err := p.images.CheckURL(m.ImageURL); err != nil {
			return err
		}
		if n := len(postContent("img_v3_0000000000000000000000000000000000000000", caption(m), DomainFeishu)); n > MaxCardBody {
			return push.Errorf(push.Invalid, "caption_too_long", "the captioned image is %d bytes as a Feishu post; the limit is %d", n, MaxCardBody)
		}
	}
	return nil
}

func caption(m push.Message) string { return strings.TrimSpace(m.Content) }

// Pace implements push.Pacer with Feishu's published limits: 50 calls a
// second and 1000 a minute per app, 5 messages a second per user and per
// chat.
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
		return nil
	}
	app := "feishu:" + tokencache.Key(p.tokenBase(c), c.AppID)
	return []pacing.Limit{
		// 25 + 1/0.075 ≈ 38 in any second, 25 + 800 in any minute.
		{Key: app, Rate: pacing.Rate{Every: 75 * time.Millisecond, Burst: 25}},
		// 3 + 2 = 5 in any second.
		{Key: app + ":" + d.Target.Address, Rate: pacing.Rate{Every: 500 * time.Millisecond, Burst: 3}},
	}
}
