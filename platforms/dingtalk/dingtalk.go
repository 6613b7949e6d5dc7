// Package dingtalk sends messages to a DingTalk group through a custom
// robot's webhook: text as a text message, Markdown as a markdown message
// (with a title derived from the content), an image as a Markdown image.
// Robots with 加签 security are signed with the secret; robots with custom
// keywords only take messages that contain one, which Herald checks before
// sending when the keywords are in the bot config. A bot is one robot in
// one group: the platform has no targets.
package dingtalk

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// DefaultAPIBase is DingTalk's open API.
const DefaultAPIBase = "https://oapi.dingtalk.com"

// MaxText is the limit on a message's text in bytes (DingTalk's observed
// limit; its documentation gives none).
const MaxText = 20000

// MaxTitle bounds the derived title of a markdown message, in characters.
const MaxTitle = 64

// maxKeywords bounds the keywords of a robot (DingTalk allows 10).
const maxKeywords = 10

// DingTalk allows 20 messages a minute per robot and then throttles the
// robot for 10 minutes. The pacer allows a burst of 4, then one every 4
// seconds: at most 4 + 60/4 = 19 sends in any 60 seconds, whatever the
// window DingTalk counts in.
const (
	paceBurst = 4
	paceEvery = 4 * time.Second
)

// throttleWait is the wait hint after DingTalk says "send too fast".
const throttleWait = time.Minute

// Config is a DingTalk robot's configuration.
type Config struct {
	// AccessToken is the access_token of the robot's webhook URL.
	AccessToken string `json:"access_token"`
	// Secret is the 加签 secret (SEC…), for robots with signing.
	Secret string `json:"secret,omitempty"`
	// Keywords are the robot's custom keywords, if it has that security
	// setting: a message must contain one of them.
	Keywords []string `json:"keywords,omitempty"`
	// APIBase replaces DingTalk's API base URL (a proxy, or tests).
	APIBase string `json:"api_base,omitempty"`
}

const configShape = `{"access_token": "<access_token of the robot's webhook>", "secret": "<optional SEC… signing secret>", "keywords": [<optional custom keywords>], "api_base": "<optional API URL>"}`

// Provider is the DingTalk custom robot push.Platform.
type Provider struct {
	shared.NoTargets

	client   *httpcall.Client
	pacer    *pacing.Pacer
	tokenRe  *regexp.Regexp
	secretRe *regexp.Regexp
	configs  botconfig.Cache[Config] // parsed once per bot, not at every send
}

var (
	_ push.Platform            = (*Provider)(nil)
	_ push.BotMessageValidator = (*Provider)(nil)
	_ push.PaceReleaser        = (*Provider)(nil)
)

// New returns the DingTalk provider on env's HTTP client and pacer (for a
// nil env, see platforms.Env). Signatures carry the real time, which
// DingTalk compares with its own clock.
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		NoTargets: shared.NoTargets{Bots: "dingtalk", Destination: "the robot's group"},
		client:    d.Client,
		pacer:     d.Pacer,
		tokenRe:   regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`),
		secretRe:  regexp.MustCompile(`^SEC[A-Za-z0-9]{16,128}$`),
	}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("dingtalk", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.AccessToken == "":
		return c, botconfig.Missing("dingtalk", "access_token", "the access_token from the robot's webhook URL (…/robot/send?access_token=…)")
	case !p.tokenRe.MatchString(c.AccessToken):
		return c, botconfig.Malformed("dingtalk", "access_token", "give the access_token value from the webhook URL, not the whole URL")
	case c.Secret != "" && !p.secretRe.MatchString(c.Secret):
		return c, botconfig.Malformed("dingtalk", "secret", "the signing secret starts with SEC followed by letters and digits, as the robot's security settings show it")
	case len(c.Keywords) > maxKeywords:
		return c, botconfig.Malformed("dingtalk", "keywords", fmt.Sprintf("a robot has at most %d custom keywords", maxKeywords))
	}
	for _, k := range c.Keywords {
		if strings.TrimSpace(k) == "" {
			return c, botconfig.Malformed("dingtalk", "keywords", "a keyword cannot be empty")
		}
	}
	return c, botconfig.BaseURL("dingtalk", "api_base", c.APIBase)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform: the text must fit DingTalk's
// limit.
func (p *Provider) ValidateMessage(m push.Message, _ push.TargetType) error {
	if n := len(checkedText(body(m))); n > MaxText {
		return push.Errorf(push.Invalid, "content_too_long", "the message is %d bytes; DingTalk's limit is %d: shorten it", n, MaxText)
	}
	return nil
}

// ValidateBotMessage implements push.BotMessageValidator: a robot with
// custom keywords refuses a message that contains none of them.
func (p *Provider) ValidateBotMessage(raw json.RawMessage, m push.Message, _ push.TargetType) error {
	c, err := p.configs.Get(raw, p.parseConfig)
	if err != nil || len(c.Keywords) == 0 {
		return err
	}
	text := checkedText(body(m))
	for _, k := range c.Keywords {
		if strings.Contains(text, k) {
			return nil
		}
	}
	return push.Errorf(push.Invalid, "missing_keyword",
		"this DingTalk robot only takes messages that contain one of its keywords (%s): add one to the content", strings.Join(c.Keywords, ", "))
}

// message is a robot message body.
type message struct {
	MsgType  string `json:"msgtype"`
	Text     *text  `json:"text,omitempty"`
	Markdown *md    `json:"markdown,omitempty"`
}

type text struct {
	Content string `json:"content"`
}

type md struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

func body(m push.Message) message {
	switch m.Type {
	case push.MsgTypeMarkdown:
		return message{MsgType: "markdown", Markdown: &md{Title: msgtext.Title(m, MaxTitle), Text: m.Content}}
	case push.MsgTypeImage:
		return message{MsgType: "markdown", Markdown: &md{Title: msgtext.Title(m, MaxTitle), Text: msgtext.ImageMarkdown(m)}}
	default:
		return message{MsgType: "text", Text: &text{Content: m.Content}}
	}
}

// checkedText is the text DingTalk checks for keywords and length.
func checkedText(b message) string {
	if b.Markdown != nil {
		return b.Markdown.Title + "\n" + b.Markdown.Text
	}
	return b.Text.Content
}

// Sign returns the 加签 signature of a timestamp in milliseconds:
// base64(HMAC-SHA256(secret, timestamp+"\n"+secret)), to be URL-encoded as
// the sign parameter.
func Sign(secret string, timestampMs int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestampMs, 10) + "\n" + secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Pace implements push.Pacer with DingTalk's limit per robot.
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
	return []pacing.Limit{{Key: "dingtalk:" + tokencache.Key(c.AccessToken), Rate: pacing.Rate{Every: paceEvery, Burst: paceBurst}}}
}

// answer is DingTalk's reply.
type answer struct {
	ErrCode *int   `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	q := url.Values{"access_token": {c.AccessToken}}
	if c.Secret != "" {
		ts := time.Now().UnixMilli()
		q.Set("timestamp", strconv.FormatInt(ts, 10))
		q.Set("sign", Sign(c.Secret, ts))
	}
	resp, err := p.client.PostJSON(ctx, botconfig.BaseOr(c.APIBase, DefaultAPIBase)+"/robot/send?"+q.Encode(), body(d.Message), http.Header{})
	if err != nil {
		return push.Receipt{}, err
	}
	var ans answer
	if err := httpcall.DecodeOwn(resp, &ans, func() bool { return ans.ErrCode != nil }, "no errcode in the answer", httpcall.Origin{Platform: "dingtalk", Name: "DingTalk"}); err != nil {
		return push.Receipt{}, err
	}
	if *ans.ErrCode == 0 {
		return push.Receipt{}, nil // DingTalk gives no message id
	}
	ans.ErrMsg = botconfig.Redact(ans.ErrMsg, c.AccessToken, c.Secret)
	return push.Receipt{}, classify(*ans.ErrCode, ans.ErrMsg)
}

// classify maps a DingTalk errcode to an outcome. Only throttling and
// "system busy" are retryable; every other code is a refusal.
func classify(errcode int, errmsg string) error {
	code := strconv.Itoa(errcode)
	errmsg = msgtext.Or(errmsg, "refused")
	switch errcode {
	case 130101, 410100:
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: code, RetryAfter: throttleWait,
			Message: errmsg + ": the robot is over DingTalk's 20 messages a minute and is throttled for about 10 minutes"}
	case -1:
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: code, Message: errmsg + ": DingTalk is busy"}
	case 300001:
		return push.DefinitiveError(code, "%s: DingTalk does not know the access token: check access_token in the bot config", errmsg)
	case 310000:
		switch low := strings.ToLower(errmsg); {
		case strings.Contains(low, "keywords not in content"):
			return push.DefinitiveError(code, "%s: the robot's security settings require one of its custom keywords in every message: add one to the content, or list the keywords in the bot config so that Herald checks before sending", errmsg)
		case strings.Contains(low, "sign not match"):
			return push.DefinitiveError(code, "%s: the signature does not match: set secret in the bot config to the robot's 加签 secret", errmsg)
		case strings.Contains(low, "invalid timestamp"):
			return push.DefinitiveError(code, "%s: this server's clock is more than an hour away from DingTalk's: correct the clock", errmsg)
		case strings.Contains(low, "whitelist"):
			return push.DefinitiveError(code, "%s: the robot only takes requests from its IP allow-list: add this server's address to it", errmsg)
		case strings.Contains(low, "sign"):
			return push.DefinitiveError(code, "%s: the robot requires 加签: set secret in the bot config", errmsg)
		}
		return push.DefinitiveError(code, "%s: the robot's security settings refused the message", errmsg)
	default:
		return push.DefinitiveError(code, "%s", errmsg)
	}
}
