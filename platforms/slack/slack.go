// Package slack posts messages to Slack-compatible incoming webhooks, in
// three flavors: Slack (text with formatting off, Markdown converted to
// mrkdwn, an image as an image block), Mattermost (Markdown, an image as
// ![](url)) and Rocket.Chat (Markdown, an image as an attachment's
// image_url). A bot is one webhook, bound to its channel: the platform has
// no targets.
package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/msgtext"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// Flavors of incoming webhook.
const (
	FlavorSlack      = "slack"
	FlavorMattermost = "mattermost"
	FlavorRocketChat = "rocketchat"
)

// Limits of each flavor, in characters.
const (
	// MaxSlackText is where Slack truncates a message's text.
	MaxSlackText = 40000
	// MaxSlackSection bounds a section block's text.
	MaxSlackSection = 3000
	// MaxSlackAltText bounds an image block's alt_text.
	MaxSlackAltText = 2000
	// MaxMattermostText is Mattermost's post size; a longer text is split
	// into several posts by the server.
	MaxMattermostText = 16383
	// MaxRocketChatText is Rocket.Chat's default Message_MaxAllowedSize.
	MaxRocketChatText = 5000
)

// Slack allows one message a second per webhook.
const slackEvery = time.Second

// Config is a webhook bot's configuration.
type Config struct {
	// WebhookURL is the incoming webhook's URL; it is a credential.
	WebhookURL string `json:"webhook_url"`
	// Flavor is slack (default), mattermost or rocketchat.
	Flavor string `json:"flavor,omitempty"`
}

const configShape = `{"webhook_url": "<incoming webhook URL>", "flavor": "slack" | "mattermost" | "rocketchat"}`

// Provider is the Slack-compatible webhook push.Platform.
type Provider struct {
	shared.NoTargets

	client  *httpcall.Client
	pacer   *pacing.Pacer
	configs botconfig.Cache[Config] // parsed once per bot, not at every send
}

var (
	_ push.Platform            = (*Provider)(nil)
	_ push.BotMessageValidator = (*Provider)(nil)
	_ push.PaceReleaser        = (*Provider)(nil)
)

// New returns the provider on env's HTTP client and pacer (for a nil env,
// see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{NoTargets: shared.NoTargets{Bots: "webhook", Destination: "the webhook's channel"}, client: d.Client, pacer: d.Pacer}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("slack", raw, &c, configShape); err != nil {
		return c, err
	}
	if c.Flavor == "" {
		c.Flavor = FlavorSlack
	}
	switch c.Flavor {
	case FlavorSlack, FlavorMattermost, FlavorRocketChat:
	default:
		return c, botconfig.Malformed("slack", "flavor", "give slack, mattermost or rocketchat")
	}
	if c.WebhookURL == "" {
		return c, botconfig.Missing("slack", "webhook_url", "the incoming webhook's URL")
	}
	u, err := url.Parse(c.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return c, botconfig.Malformed("slack", "webhook_url", "give the webhook's whole http or https URL, e.g. https://hooks.slack.com/services/T…/B…/…")
	}
	return c, nil
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform. The limits depend on the
// flavor: see ValidateBotMessage.
func (p *Provider) ValidateMessage(push.Message, push.TargetType) error { return nil }

// ValidateBotMessage implements push.BotMessageValidator: the payload must
// fit the flavor's limits.
func (p *Provider) ValidateBotMessage(raw json.RawMessage, m push.Message, _ push.TargetType) error {
	c, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return err
	}
	tooLong := func(what string, n, limit int) error {
		return push.Errorf(push.Invalid, "content_too_long", "the %s is %d characters; the %s limit is %d: shorten it", what, n, c.Flavor, limit)
	}
	pl := payload(c.Flavor, m)
	n := utf8.RuneCountInString(pl.Text)
	switch c.Flavor {
	case FlavorSlack:
		if n > MaxSlackText {
			return tooLong("message text", n, MaxSlackText)
		}
		for _, b := range pl.Blocks {
			if b.Text != nil && utf8.RuneCountInString(b.Text.Text) > MaxSlackSection {
				return tooLong("caption", utf8.RuneCountInString(b.Text.Text), MaxSlackSection)
			}
			if k := utf8.RuneCountInString(b.AltText); k > MaxSlackAltText {
				return tooLong("image's alt text", k, MaxSlackAltText)
			}
		}
	case FlavorMattermost:
		if n > MaxMattermostText {
			return tooLong("message text", n, MaxMattermostText)
		}
	case FlavorRocketChat:
		if n > MaxRocketChatText {
			return tooLong("message text", n, MaxRocketChatText)
		}
	}
	return nil
}

// message is a webhook payload; each flavor uses its part of it.
type message struct {
	Text        string       `json:"text,omitempty"`
	Mrkdwn      *bool        `json:"mrkdwn,omitempty"`
	Blocks      []block      `json:"blocks,omitempty"`
	Attachments []attachment `json:"attachments,omitempty"`
}

type block struct {
	Type     string     `json:"type"`
	Text     *textField `json:"text,omitempty"`
	ImageURL string     `json:"image_url,omitempty"`
	AltText  string     `json:"alt_text,omitempty"`
}

type textField struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type attachment struct {
	ImageURL string `json:"image_url"`
}

func payload(flavor string, m push.Message) message {
	switch flavor {
	case FlavorMattermost:
		return message{Text: msgtext.Markdown(m)}
	case FlavorRocketChat:
		// Rocket.Chat renders every message with its own Markdown parser;
		// text is sent as written.
		if m.Type == push.MsgTypeImage {
			return message{Text: strings.TrimSpace(m.Content), Attachments: []attachment{{ImageURL: m.ImageURL}}}
		}
		return message{Text: m.Content}
	default:
		switch m.Type {
		case push.MsgTypeMarkdown:
			return message{Text: Mrkdwn(m.Content)}
		case push.MsgTypeImage:
			caption := msgtext.Caption(m)
			var blocks []block
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, block{Type: "section", Text: &textField{Type: "plain_text", Text: m.Content}})
			}
			blocks = append(blocks, block{Type: "image", ImageURL: m.ImageURL, AltText: caption})
			// text is the notification's fallback.
			return message{Text: EscapeText(caption), Blocks: blocks}
		default:
			off := false
			return message{Text: EscapeText(m.Content), Mrkdwn: &off}
		}
	}
}

// Pace implements push.Pacer: one message a second per Slack webhook.
// Mattermost and Rocket.Chat servers set their own limits, off by default.
func (p *Provider) Pace(d push.Delivery) time.Duration { return p.pacer.Reserve(p.paceLimits(d)...) }

// ReleasePace implements push.PaceReleaser.
func (p *Provider) ReleasePace(d push.Delivery) { p.pacer.Release(p.paceLimits(d)...) }

// paceLimits are the limits a send of d is paced by.
func (p *Provider) paceLimits(d push.Delivery) []pacing.Limit {
	if p.pacer == nil {
		return nil
	}
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil || c.Flavor != FlavorSlack {
		return nil
	}
	return []pacing.Limit{{Key: "slack:" + tokencache.Key(c.WebhookURL), Rate: pacing.Rate{Every: slackEvery, Burst: 1}}}
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	resp, err := p.client.PostJSON(ctx, c.WebhookURL, payload(c.Flavor, d.Message), http.Header{})
	if err != nil {
		return push.Receipt{}, err
	}
	var res error
	switch c.Flavor {
	case FlavorMattermost:
		res = mattermostResult(resp)
	case FlavorRocketChat:
		res = rocketChatResult(resp)
	default:
		res = slackResult(resp)
	}
	if se, ok := res.(*push.SendError); ok {
		// An answer (say a proxy's error page) may quote the URL.
		se.Message = botconfig.Redact(se.Message, urlSecrets(c.WebhookURL)...)
	}
	return push.Receipt{}, res
}

// urlSecrets are the parts of a webhook URL that must not be shown: the
// URL, its path and every long path segment (the webhook's key).
func urlSecrets(raw string) []string {
	out := []string{raw}
	if u, err := url.Parse(raw); err == nil {
		out = append(out, u.Path)
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= 8 {
				out = append(out, seg)
			}
		}
	}
	return out
}

// snippet is a short, single-line piece of a platform's text answer.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	return msgtext.Truncate(s, 200)
}

// statusError classifies a failed answer by its status (httpcall.Refused);
// a 429 without Retry-After waits for Slack's one message a second.
func statusError(resp *httpcall.Response, code, msg, hint string) error {
	se := httpcall.Refused(resp, code, msg, hint)
	if se.Outcome == push.OutcomeRetryable && se.RetryAfter == 0 {
		se.RetryAfter = slackEvery
	}
	return se
}

// okAnswer reads the 2xx answer of Slack and Mattermost: "ok".
func okAnswer(resp *httpcall.Response) error {
	if strings.TrimSpace(string(resp.Body)) == "ok" {
		return nil
	}
	return httpcall.Unreadable(resp, fmt.Errorf("the answer is not \"ok\": %q", snippet(resp.Body)))
}

// foreign classifies a failed answer that is not the service's own error
// (a proxy's page, an empty body): a 5xx is a gateway's failure, any other
// status is classified by statusError with the start of the body.
func foreign(resp *httpcall.Response) error {
	if resp.Status >= 500 {
		return httpcall.GatewayFailure(resp)
	}
	return statusError(resp, strconv.Itoa(resp.Status), "HTTP "+strconv.Itoa(resp.Status)+" "+snippet(resp.Body), "")
}

// slackResult reads Slack's answer: "ok", or a plain-text error code.
func slackResult(resp *httpcall.Response) error {
	if resp.Status >= 200 && resp.Status < 300 {
		return okAnswer(resp)
	}
	code := strings.TrimSpace(string(resp.Body))
	if code == "" || strings.ContainsAny(code, " <") {
		return foreign(resp)
	}
	hint := ""
	switch code {
	case "invalid_token", "no_service", "no_team", "team_disabled":
		hint = "the webhook URL is not (or no longer) valid: create a new webhook and update webhook_url"
	case "channel_not_found", "channel_is_archived", "action_prohibited", "posting_to_general_channel_denied":
		hint = "the webhook's channel does not take the post"
	}
	return statusError(resp, code, "HTTP "+strconv.Itoa(resp.Status)+" "+snippet(resp.Body), hint)
}

// mattermostResult reads Mattermost's answer: "ok", or an app error.
func mattermostResult(resp *httpcall.Response) error {
	if resp.Status >= 200 && resp.Status < 300 {
		return okAnswer(resp)
	}
	var ae struct {
		ID      string `json:"id"`
		Message string `json:"message"`
	}
	if json.Unmarshal(resp.Body, &ae) != nil || ae.Message == "" {
		return foreign(resp)
	}
	hint := ""
	if ae.ID == "web.incoming_webhook.invalid.app_error" {
		hint = "the webhook URL is not (or no longer) valid: update webhook_url"
	}
	return statusError(resp, ae.ID, ae.Message, hint)
}

// rocketChatResult reads Rocket.Chat's answer: {"success":true}, or
// {"success":false,"error":…}.
func rocketChatResult(resp *httpcall.Response) error {
	var ans struct {
		Success *bool  `json:"success"`
		Error   string `json:"error"`
	}
	jerr := json.Unmarshal(resp.Body, &ans)
	if resp.Status >= 200 && resp.Status < 300 {
		switch {
		case jerr != nil:
			return httpcall.Unreadable(resp, jerr)
		case ans.Success == nil:
			return httpcall.Unreadable(resp, fmt.Errorf("no success field in the answer"))
		case *ans.Success:
			return nil
		}
		return push.DefinitiveError(strconv.Itoa(resp.Status), "%s", msgtext.Or(ans.Error, "refused"))
	}
	if jerr != nil || ans.Error == "" {
		return foreign(resp)
	}
	hint := ""
	if resp.Status == http.StatusNotFound || strings.Contains(strings.ToLower(ans.Error), "token") {
		hint = "the webhook URL is not (or no longer) valid: update webhook_url"
	}
	return statusError(resp, strconv.Itoa(resp.Status), ans.Error, hint)
}
