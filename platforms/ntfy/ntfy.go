// Package ntfy publishes messages to a topic of an ntfy server (ntfy.sh or
// self-hosted) as JSON: text as the message, Markdown with markdown:true,
// an image as an external attachment URL. A bot is one topic: the platform
// has no targets.
package ntfy

import (
	"context"
	"encoding/base64"
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
	"github.com/heraldpush/herald/platforms/internal/msgtext"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// DefaultServer is the public ntfy server.
const DefaultServer = "https://ntfy.sh"

// DefaultMessageLimit is ntfy's default message size limit in bytes
// (message-size-limit). A longer body is not shown as a message: the
// server turns it into a file attachment, or refuses it when attachments
// are off, and a body sent with an attachment URL is cut at the limit.
const DefaultMessageLimit = 4096

// maxMessageLimit bounds message_limit in the bot config.
const maxMessageLimit = 256 << 10

// ntfy's default request limit per visitor: a burst of 60, then one
// request every 5 seconds (visitor-request-limit-burst and
// visitor-request-limit-replenish).
const (
	requestBurst = 60
	requestEvery = 5 * time.Second
)

// Config is an ntfy bot's configuration.
type Config struct {
	// Server is the ntfy server's URL (default https://ntfy.sh).
	Server string `json:"server,omitempty"`
	// Topic is the topic to publish to.
	Topic string `json:"topic"`
	// Token is an access token (tk_…) for protected topics.
	Token string `json:"token,omitempty"`
	// User and Password are the alternative to a token.
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	// MessageLimit is the server's message-size-limit in bytes (default
	// 4096); longer messages are refused before they are queued.
	MessageLimit int `json:"message_limit,omitempty"`
}

const configShape = `{"topic": "<topic>", "server": "<optional server URL, default https://ntfy.sh>", "token": "<optional access token>" or "user"/"password", "message_limit": <optional server message size limit in bytes, default 4096>}`

// Provider is the ntfy push.Platform.
type Provider struct {
	shared.NoTargets

	client  *httpcall.Client
	pacer   *pacing.Pacer
	topicRe *regexp.Regexp
	configs botconfig.Cache[Config] // parsed once per bot, not at every send
}

var (
	_ push.Platform            = (*Provider)(nil)
	_ push.BotMessageValidator = (*Provider)(nil)
	_ push.PaceReleaser        = (*Provider)(nil)
)

// New returns the ntfy provider on env's HTTP client and pacer (for a nil
// env, see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{NoTargets: shared.NoTargets{Bots: "ntfy", Destination: "the bot's topic"}, client: d.Client, pacer: d.Pacer, topicRe: regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("ntfy", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.Topic == "":
		return c, botconfig.Missing("ntfy", "topic", "the topic to publish to")
	case !p.topicRe.MatchString(c.Topic):
		return c, botconfig.Malformed("ntfy", "topic", "a topic is 1 to 64 letters, digits, '-' or '_'")
	case c.Token != "" && (c.User != "" || c.Password != ""):
		return c, botconfig.Malformed("ntfy", "token", "give either a token or a user and password, not both")
	case c.Token != "" && !botconfig.Printable(c.Token):
		return c, botconfig.Malformed("ntfy", "token", "an access token is printable ASCII without spaces, e.g. tk_…")
	case c.User != "" && c.Password == "":
		return c, botconfig.Missing("ntfy", "password", "the password of the user")
	case c.Password != "" && c.User == "":
		return c, botconfig.Missing("ntfy", "user", "the user the password belongs to")
	case c.User != "" && (strings.Contains(c.User, ":") || !botconfig.Printable(c.User)):
		return c, botconfig.Malformed("ntfy", "user", "a user name is printable ASCII without spaces or ':'")
	case c.MessageLimit < 0 || c.MessageLimit > maxMessageLimit:
		return c, botconfig.Malformed("ntfy", "message_limit", fmt.Sprintf("give the server's message-size-limit in bytes, 1 to %d (default %d)", maxMessageLimit, DefaultMessageLimit))
	}
	if c.MessageLimit == 0 {
		c.MessageLimit = DefaultMessageLimit
	}
	return c, botconfig.BaseURL("ntfy", "server", c.Server)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform. The size limit depends on the
// bot's server: see ValidateBotMessage.
func (p *Provider) ValidateMessage(push.Message, push.TargetType) error { return nil }

// ValidateBotMessage implements push.BotMessageValidator: the message must
// fit the server's message size limit, because ntfy does not refuse a
// longer body but turns it into a file attachment (or cuts it, next to an
// image). Herald refuses it instead of splitting it, so that one job is
// one ntfy message and a partial failure can never resend a part.
func (p *Provider) ValidateBotMessage(raw json.RawMessage, m push.Message, _ push.TargetType) error {
	c, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return err
	}
	body := publishBody(c, m)
	// ntfy reads at most the limit and treats a body that fills it as
	// too large (it cannot tell whether more follows): the message must
	// be shorter than the limit, and the JSON shorter than twice it.
	if n := len(body.Message); n >= c.MessageLimit {
		return push.Errorf(push.Invalid, "content_too_long",
			"the message is %d bytes in UTF-8; the ntfy server's message limit is %d bytes, and a message of that size or longer would arrive as a file attachment, not as text: shorten it to %d bytes or fewer, or set message_limit in the bot config if the server's message-size-limit is higher", n, c.MessageLimit, c.MessageLimit-1)
	}
	data, err := encodePublish(body)
	if err != nil {
		return push.Errorf(push.Invalid, "invalid_content", "the message cannot be encoded as JSON: %v", err)
	}
	if len(data) >= 2*c.MessageLimit {
		return push.Errorf(push.Invalid, "content_too_long",
			"the message takes %d bytes as JSON; the ntfy server accepts less than %d (twice its message limit): shorten it", len(data), 2*c.MessageLimit)
	}
	return nil
}

// encodePublish is the JSON body exactly as Send posts it. <, > and & are
// written as themselves: ntfy counts the bytes of the body, and
// encoding/json's \u003c would make them six bytes each.
func encodePublish(b publish) ([]byte, error) { return httpcall.MarshalUnescaped(b) }

// publish is ntfy's JSON publish body.
type publish struct {
	Topic    string `json:"topic"`
	Message  string `json:"message"`
	Markdown bool   `json:"markdown,omitempty"`
	Attach   string `json:"attach,omitempty"`
	Filename string `json:"filename,omitempty"`
}

func publishBody(c Config, m push.Message) publish {
	b := publish{Topic: c.Topic, Message: m.Content}
	switch m.Type {
	case push.MsgTypeMarkdown:
		b.Markdown = true
	case push.MsgTypeImage:
		// An empty message would show as "triggered": caption it.
		b.Message = msgtext.Caption(m)
		b.Attach = m.ImageURL
		b.Filename = msgtext.ImageName(m.ImageURL)
	}
	return b
}

// Pace implements push.Pacer with ntfy's default request limit per
// server and credentials.
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
	return []pacing.Limit{{Key: "ntfy:" + tokencache.Key(botconfig.BaseOr(c.Server, DefaultServer), c.Token, c.User), Rate: pacing.Rate{Every: requestEvery, Burst: requestBurst}}}
}

// answer is ntfy's reply: the published message, or an error.
type answer struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Code  int    `json:"code"`
	HTTP  int    `json:"http"`
	Error string `json:"error"`
}

// authHeader is the Authorization of a bot's requests: its access token,
// or its user and password, or none.
func authHeader(c Config) http.Header {
	header := http.Header{}
	switch {
	case c.Token != "":
		header.Set("Authorization", "Bearer "+c.Token)
	case c.User != "":
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.User+":"+c.Password)))
	}
	return header
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	body, err := encodePublish(publishBody(c, d.Message))
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "encode request: %v", err)
	}
	resp, err := p.client.PostJSONBody(ctx, botconfig.BaseOr(c.Server, DefaultServer)+"/", body, authHeader(c))
	if err != nil {
		return push.Receipt{}, err
	}
	var ans answer
	jerr := json.Unmarshal(resp.Body, &ans)
	if resp.Status >= 200 && resp.Status < 300 {
		if jerr != nil {
			return push.Receipt{}, httpcall.Unreadable(resp, jerr)
		}
		if ans.ID == "" {
			return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("no message id in the answer"))
		}
		return push.Receipt{PlatformIndex: ans.ID}, nil
	}
	if jerr != nil || ans.Error == "" {
		return push.Receipt{}, httpcall.Foreign(resp, jerr, httpcall.Origin{Platform: "ntfy", Name: "ntfy"})
	}
	return push.Receipt{}, classify(resp, ans)
}

// authFailureLimit is ntfy's code for "limit reached: too many auth
// failures": the server refuses every request with credentials from this
// address, right or wrong, until failures age out.
const authFailureLimit = 42909

// classify maps an ntfy error answer to an outcome. A 429 (42901 too many
// requests, 42908 daily message quota, …) was refused before publishing;
// ntfy gives no wait hint unless a proxy in front of it adds Retry-After.
// 42909 is definitive: retrying only extends the lockout, and its cause
// is a bot with wrong credentials.
func classify(resp *httpcall.Response, ans answer) error {
	code := strconv.Itoa(ans.Code)
	if ans.Code == 0 {
		code = strconv.Itoa(resp.Status)
	}
	if ans.Code == authFailureLimit {
		return push.DefinitiveError(code, "%s: the server locks out this address after too many failed authentications, for every bot on it: "+
			"check the token, or user and password, of the bots on this server (one with wrong credentials causes it), then send again once the failures have aged out (ntfy forgives one a minute)", ans.Error)
	}
	hint := ""
	switch resp.Status {
	case http.StatusUnauthorized:
		hint = "the server refused the credentials: check token, or user and password, in the bot config"
	case http.StatusForbidden:
		hint = "these credentials (or anonymous access) may not publish to the topic: give a token or user with write access"
	}
	return httpcall.Refused(resp, code, ans.Error, hint)
}
