// Package pushplus sends messages through PushPlus (pushplus.plus) with a
// user token: text with the txt template, Markdown with the markdown
// template, an image as a Markdown image; the title, which WeChat shows,
// is derived from the content. A bot is one token (and optional topic):
// the platform has no targets.
//
// PushPlus answers {"code":200,"data":"<流水号>"} when it has validated and
// accepted a message; it then delivers it asynchronously (WeChat, mail,
// webhook…). Herald records that answer as succeeded with the 流水号 as
// platformIndex, the same reading as every other platform's 2xx: the
// platform took the message and Herald's part is done; refusals it can
// detect (bad token, quota, points, verification, validation) come back
// synchronously as other codes and fail the job. Whether WeChat showed
// the message afterwards can be looked up at PushPlus by the 流水号.
package pushplus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/msgtext"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/push"
)

// DefaultAPIBase is PushPlus's API.
const DefaultAPIBase = "https://www.pushplus.plus"

// MaxTitle bounds the derived title, in characters.
const MaxTitle = 100

// Config is a PushPlus bot's configuration.
type Config struct {
	// Token is the user token (用户令牌).
	Token string `json:"token"`
	// Topic, when set, is the group code (群组编码) to send to; otherwise
	// the message goes to the token's owner.
	Topic string `json:"topic,omitempty"`
	// APIBase replaces the API's base URL (a proxy, or tests).
	APIBase string `json:"api_base,omitempty"`
}

const configShape = `{"token": "<PushPlus user token>", "topic": "<optional group code>", "api_base": "<optional API URL>"}`

// Provider is the PushPlus push.Platform. PushPlus limits requests per day
// (a token over its daily count is restricted, code 900), not per second,
// so it does not pace sends.
type Provider struct {
	shared.NoTargets

	client  *httpcall.Client
	tokenRe *regexp.Regexp
	topicRe *regexp.Regexp
	configs botconfig.Cache[Config] // parsed once per bot, not at every send
}

var _ push.Platform = (*Provider)(nil)

// New returns the PushPlus provider on env's HTTP client (for a nil env,
// see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		NoTargets: shared.NoTargets{Bots: "pushplus", Destination: "the bot's token (and topic)"},
		client:    d.Client,
		tokenRe:   regexp.MustCompile(`^[A-Za-z0-9]{16,64}$`),
		topicRe:   regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`),
	}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("pushplus", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.Token == "":
		return c, botconfig.Missing("pushplus", "token", "the user token from pushplus.plus")
	case !p.tokenRe.MatchString(c.Token):
		return c, botconfig.Malformed("pushplus", "token", "a user token is 16 to 64 letters and digits (32 hexadecimal digits as PushPlus shows it)")
	case c.Topic != "" && !p.topicRe.MatchString(c.Topic):
		return c, botconfig.Malformed("pushplus", "topic", "a group code is letters, digits, '-' or '_'")
	}
	return c, botconfig.BaseURL("pushplus", "api_base", c.APIBase)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform. PushPlus documents no content
// limit below Herald's own.
func (p *Provider) ValidateMessage(push.Message, push.TargetType) error { return nil }

// request is PushPlus's send body.
type request struct {
	Token    string `json:"token"`
	Title    string `json:"title"`
	Content  string `json:"content"`
	Template string `json:"template"`
	Topic    string `json:"topic,omitempty"`
}

func body(c Config, m push.Message) request {
	r := request{Token: c.Token, Title: msgtext.Title(m, MaxTitle), Content: m.Content, Template: "txt", Topic: c.Topic}
	switch m.Type {
	case push.MsgTypeMarkdown:
		r.Template = "markdown"
	case push.MsgTypeImage:
		r.Template = "markdown"
		r.Content = msgtext.ImageMarkdown(m)
	}
	return r
}

// answer is PushPlus's reply.
type answer struct {
	Code *int            `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	// PushPlus reads the body only with Content-Type: application/json,
	// which PostJSON sets.
	resp, err := p.client.PostJSON(ctx, botconfig.BaseOr(c.APIBase, DefaultAPIBase)+"/send", body(c, d.Message), http.Header{})
	if err != nil {
		return push.Receipt{}, err
	}
	var ans answer
	if err := httpcall.DecodeOwn(resp, &ans, func() bool { return ans.Code != nil }, "no code in the answer", httpcall.Origin{Platform: "pushplus", Name: "PushPlus"}); err != nil {
		return push.Receipt{}, err
	}
	msg := botconfig.Redact(ans.Msg, c.Token)
	code := strconv.Itoa(*ans.Code)
	switch *ans.Code {
	case 200:
		var serial string
		if json.Unmarshal(ans.Data, &serial) != nil || serial == "" {
			return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("no 流水号 in the answer"))
		}
		return push.Receipt{PlatformIndex: serial}, nil
	case 500:
		// 系统异常: PushPlus failed before accepting the message.
		return push.Receipt{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: code, Message: msg}
	case 903:
		return push.Receipt{}, push.DefinitiveError(code, "%s: the token was refused: check token in the bot config", msg)
	case 900:
		return push.Receipt{}, push.DefinitiveError(code, "%s: the account is restricted after too many requests: stop sending through it for today", msg)
	case 888:
		return push.Receipt{}, push.DefinitiveError(code, "%s: the PushPlus account has too few points for this channel", msg)
	case 905:
		return push.Receipt{}, push.DefinitiveError(code, "%s: the PushPlus account must complete real-name verification", msg)
	default: // 999 validation and the rest
		return push.Receipt{}, push.DefinitiveError(code, "%s", msgtext.Or(msg, "refused"))
	}
}
