// Package bark sends notifications to an iOS device through a Bark server
// (api.day.app or self-hosted): text as the body, Markdown with the
// markdown parameter, an image with the image parameter. The job id is
// Bark's id, the APNs collapse id, so a repeated delivery replaces the
// notification instead of adding one. A bot is one device: the platform
// has no targets.
package bark

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/msgtext"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/push"
)

// DefaultServer is the public Bark server.
const DefaultServer = "https://api.day.app"

// MaxPayload is APNs' limit on a notification's payload in bytes. The Bark
// server answers a larger one with "push failed: … PayloadTooLarge".
const MaxPayload = 4096

// payloadMargin is kept free below MaxPayload for fields a Bark server may
// add that this provider does not know of.
const payloadMargin = 200

// jobIDLen is the length of a job id (a UUID), sent as Bark's id.
const jobIDLen = 36

// Config is a Bark bot's configuration.
type Config struct {
	// Server is the Bark server's URL (default https://api.day.app).
	Server string `json:"server,omitempty"`
	// DeviceKey is the key the Bark app shows for the device.
	DeviceKey string `json:"device_key"`
	// Group, when set, groups the notifications on the device.
	Group string `json:"group,omitempty"`
}

const configShape = `{"device_key": "<device key from the Bark app>", "server": "<optional server URL, default https://api.day.app>", "group": "<optional notification group>"}`

// Provider is the Bark push.Platform. Bark publishes no rate limit, so it
// does not pace sends.
type Provider struct {
	shared.NoTargets

	client  *httpcall.Client
	keyRe   *regexp.Regexp
	configs botconfig.Cache[Config] // parsed once per bot, not at every send
}

var (
	_ push.Platform            = (*Provider)(nil)
	_ push.BotMessageValidator = (*Provider)(nil)
)

// New returns the Bark provider on env's HTTP client (for a nil env,
// see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{NoTargets: shared.NoTargets{Bots: "bark", Destination: "the bot's device"}, client: d.Client, keyRe: regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("bark", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.DeviceKey == "":
		return c, botconfig.Missing("bark", "device_key", "the device key shown in the Bark app")
	case !p.keyRe.MatchString(c.DeviceKey):
		return c, botconfig.Malformed("bark", "device_key", "a device key is letters and digits, as the Bark app shows it")
	case len(c.Group) > 64:
		return c, botconfig.Malformed("bark", "group", "a group name is at most 64 bytes")
	}
	return c, botconfig.BaseURL("bark", "server", c.Server)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform. The payload limit depends on
// the bot's group: see ValidateBotMessage.
func (p *Provider) ValidateMessage(push.Message, push.TargetType) error { return nil }

// ValidateBotMessage implements push.BotMessageValidator: the notification
// the Bark server builds must fit APNs' 4 KB payload limit (with a margin),
// which Apple refuses as PayloadTooLarge after the job was charged.
func (p *Provider) ValidateBotMessage(raw json.RawMessage, m push.Message, _ push.TargetType) error {
	c, err := p.configs.Get(raw, p.parseConfig)
	if err != nil {
		return err
	}
	if n := PayloadSize(params(c, m, strings.Repeat("0", jobIDLen))); n > MaxPayload-payloadMargin {
		return push.Errorf(push.Invalid, "content_too_long",
			"the notification would be a %d-byte APNs payload; Bark's limit is %d bytes (Herald keeps %d free): shorten the message (roughly 1200 Chinese characters fit)", n, MaxPayload, payloadMargin)
	}
	return nil
}

// params are the parameters of Bark's JSON push.
func params(c Config, m push.Message, id string) map[string]any {
	p := map[string]any{"device_key": c.DeviceKey, "id": id}
	if c.Group != "" {
		p["group"] = c.Group
	}
	switch m.Type {
	case push.MsgTypeMarkdown:
		// The app renders markdown and ignores body.
		p["markdown"] = m.Content
	case push.MsgTypeImage:
		p["body"] = msgtext.Caption(m)
		p["image"] = m.ImageURL
	default:
		p["body"] = m.Content
	}
	return p
}

// PayloadSize is the size of the APNs payload a Bark server builds from
// the push parameters: title and body (default "NoContent") in the alert,
// sound, category, thread-id from the group, mutable-content, and every
// other parameter as a custom string field.
func PayloadSize(params map[string]any) int {
	alert := map[string]any{"body": "NoContent"}
	aps := map[string]any{"alert": alert, "sound": "1107", "category": "myNotificationCategory", "mutable-content": 1}
	payload := map[string]any{"aps": aps}
	for k, v := range params {
		switch k = strings.ToLower(k); k {
		case "device_key":
		case "title", "body":
			alert[k] = v
		case "sound", "category":
			aps[k] = v
		default:
			if k == "group" {
				aps["thread-id"] = v
			}
			payload[k] = fmt.Sprintf("%v", v)
		}
	}
	b, _ := json.Marshal(payload)
	return len(b)
}

// answer is the Bark server's reply.
type answer struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	resp, err := p.client.PostJSON(ctx, botconfig.BaseOr(c.Server, DefaultServer)+"/push", params(c, d.Message, d.JobID), http.Header{})
	if err != nil {
		return push.Receipt{}, err
	}
	var ans answer
	jerr := json.Unmarshal(resp.Body, &ans)
	if resp.Status >= 200 && resp.Status < 300 {
		if jerr != nil {
			return push.Receipt{}, httpcall.Unreadable(resp, jerr)
		}
		if ans.Code != http.StatusOK {
			return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("code %d: %s", ans.Code, ans.Message))
		}
		// Bark gives no message id.
		return push.Receipt{}, nil
	}
	if jerr != nil || ans.Message == "" {
		if resp.Status == http.StatusTeapot {
			return push.Receipt{}, push.DefinitiveError("418", "the Bark server requires basic authentication, which Herald does not send: allow the request or use a server without it")
		}
		return push.Receipt{}, httpcall.Foreign(resp, jerr, httpcall.Origin{Platform: "bark", Name: "Bark"})
	}
	ans.Message = botconfig.Redact(ans.Message, c.DeviceKey)
	return push.Receipt{}, classify(resp, ans)
}

// apnsReason picks the APNs reason out of "push failed: APNS push failed:
// <Reason>".
func apnsReason(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return strings.TrimSpace(msg[i+2:])
	}
	return msg
}

// classify maps a Bark error answer to an outcome.
func classify(resp *httpcall.Response, ans answer) error {
	code := strconv.Itoa(resp.Status)
	if ans.Code != 0 {
		code = strconv.Itoa(ans.Code)
	}
	if resp.Status >= 500 && strings.HasPrefix(ans.Message, "push failed") {
		// The server asked APNs: its reason says whether Apple refused.
		switch apnsReason(ans.Message) {
		case "PayloadTooLarge":
			return push.DefinitiveError(code, "%s: the notification is larger than APNs' 4 KB: shorten the message", ans.Message)
		case "BadDeviceToken", "Unregistered", "DeviceTokenNotForTopic", "MissingDeviceToken", "BadTopic", "TopicDisallowed", "BadCollapseId", "BadExpirationDate", "BadPriority", "BadMessageId", "ExpiredToken", "InvalidProviderToken", "MissingProviderToken", "Forbidden":
			return push.DefinitiveError(code, "%s: Apple refused the notification", ans.Message)
		case "TooManyRequests":
			return &push.SendError{Outcome: push.OutcomeRetryable, Code: code, Message: ans.Message + ": Apple limits notifications to this device"}
		}
	}
	hint := ""
	if strings.HasPrefix(ans.Message, "failed to get device token") {
		hint = "the server does not know the device key: check device_key in the bot config"
	}
	return httpcall.Refused(resp, code, ans.Message, hint)
}
