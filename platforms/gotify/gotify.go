// Package gotify sends messages to a Gotify server as an application:
// text as the message, Markdown through the client::display extras, an
// image through the client::notification extras (and as a Markdown image
// for the web UI). A bot is one application: the platform has no targets.
package gotify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/msgtext"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/push"
)

// Config is a Gotify bot's configuration.
type Config struct {
	// Server is the Gotify server's URL.
	Server string `json:"server"`
	// Token is the application token (sent as X-Gotify-Key).
	Token string `json:"token"`
	// Priority, when set (0 to 10), replaces the application's default
	// priority.
	Priority *int `json:"priority,omitempty"`
}

const configShape = `{"server": "<Gotify server URL>", "token": "<application token>", "priority": <optional 0-10>}`

// Provider is the Gotify push.Platform. Gotify publishes no rate limit,
// so it does not pace sends.
type Provider struct {
	shared.NoTargets

	client  *httpcall.Client
	configs botconfig.Cache[Config] // parsed once per bot, not at every send
}

var _ push.Platform = (*Provider)(nil)

// New returns the Gotify provider on env's HTTP client (for a nil env,
// see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{NoTargets: shared.NoTargets{Bots: "gotify", Destination: "the bot's application"}, client: d.Client}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("gotify", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.Server == "":
		return c, botconfig.Missing("gotify", "server", "the URL of the Gotify server, e.g. https://gotify.example.com")
	case c.Token == "":
		return c, botconfig.Missing("gotify", "token", "the token of a Gotify application (Apps → the application's token)")
	case len(c.Token) > 256 || !botconfig.Printable(c.Token):
		return c, botconfig.Malformed("gotify", "token", "an application token is printable ASCII without spaces, e.g. AbCdEf0123456.-_")
	case c.Priority != nil && (*c.Priority < 0 || *c.Priority > 10):
		return c, botconfig.Malformed("gotify", "priority", "give a priority from 0 to 10, or leave it out for the application's default")
	}
	return c, botconfig.BaseURL("gotify", "server", c.Server)
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform. Gotify sets no length limit of
// its own; Herald's content limit applies.
func (p *Provider) ValidateMessage(push.Message, push.TargetType) error { return nil }

// message is Gotify's message body.
type message struct {
	Message  string         `json:"message"`
	Priority *int           `json:"priority,omitempty"`
	Extras   map[string]any `json:"extras,omitempty"`
}

func body(c Config, m push.Message) message {
	b := message{Message: m.Content, Priority: c.Priority}
	markdown := map[string]any{"client::display": map[string]any{"contentType": "text/markdown"}}
	switch m.Type {
	case push.MsgTypeMarkdown:
		b.Extras = markdown
	case push.MsgTypeImage:
		caption := msgtext.Caption(m)
		b.Message = msgtext.EscapeMarkdown(caption) + "\n\n" + msgtext.MarkdownImage(m.ImageURL, caption)
		b.Extras = markdown
		b.Extras["client::notification"] = map[string]any{"bigImageUrl": m.ImageURL}
	}
	return b
}

// answer is Gotify's reply: the stored message, or an error.
type answer struct {
	ID               int64  `json:"id"`
	Error            string `json:"error"`
	ErrorCode        int    `json:"errorCode"`
	ErrorDescription string `json:"errorDescription"`
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	resp, err := p.client.PostJSON(ctx, strings.TrimRight(c.Server, "/")+"/message", body(c, d.Message), http.Header{"X-Gotify-Key": {c.Token}})
	if err != nil {
		return push.Receipt{}, err
	}
	var ans answer
	jerr := json.Unmarshal(resp.Body, &ans)
	if resp.Status >= 200 && resp.Status < 300 {
		if jerr != nil {
			return push.Receipt{}, httpcall.Unreadable(resp, jerr)
		}
		if ans.ID <= 0 {
			return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("no message id in the answer"))
		}
		return push.Receipt{PlatformIndex: strconv.FormatInt(ans.ID, 10)}, nil
	}
	if jerr != nil || ans.Error == "" {
		return push.Receipt{}, httpcall.Foreign(resp, jerr, httpcall.Origin{Platform: "gotify", Name: "Gotify"})
	}
	return push.Receipt{}, classify(resp, ans)
}

// classify maps a Gotify error answer to an outcome.
func classify(resp *httpcall.Response, ans answer) error {
	msg := ans.Error
	if ans.ErrorDescription != "" {
		msg += ": " + ans.ErrorDescription
	}
	hint := ""
	if resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden {
		hint = "the server refused the token: give an application token (not a client token) in the bot config"
	}
	return httpcall.Refused(resp, strconv.Itoa(resp.Status), msg, hint)
}
