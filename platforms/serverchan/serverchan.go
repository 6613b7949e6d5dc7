// Package serverchan sends messages through Server酱 (ServerChan Turbo,
// sctapi.ftqq.com, and Server酱³ for sctp… keys) with a SendKey. Every
// message is a title (required, at most 32 characters: derived from the
// content) and a Markdown desp: Markdown is sent as it is, text escaped so
// that it shows as written, an image as ![](url). A bot is one SendKey:
// the platform has no targets.
package serverchan

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// DefaultAPIBase is ServerChan Turbo's API; Server酱³ keys (sctp<uid>t…)
// go to https://<uid>.push.ft07.com instead.
const DefaultAPIBase = "https://sctapi.ftqq.com"

// ServerChan's limits.
const (
	MaxTitle = 32       // characters
	MaxDesp  = 32 << 10 // bytes
)

// Config is a ServerChan bot's configuration.
type Config struct {
	// SendKey is the key from sct.ftqq.com (SCT…) or Server酱³ (sctp…).
	SendKey string `json:"sendkey"`
	// APIBase replaces the API's base URL (a proxy, or tests).
	APIBase string `json:"api_base,omitempty"`
}

const configShape = `{"sendkey": "<SendKey, SCT… or sctp…>", "api_base": "<optional API URL>"}`

// Provider is the ServerChan push.Platform. ServerChan's limits are daily
// quotas per plan (e.g. 5 messages a day on the free plan), not a rate, so
// it does not pace sends; a send over the quota fails definitively.
type Provider struct {
	shared.NoTargets

	client  *httpcall.Client
	keyRe   *regexp.Regexp
	v3Re    *regexp.Regexp
	configs botconfig.Cache[Config] // parsed once per bot, not at every send
}

var (
	_ push.Platform = (*Provider)(nil)
)

// New returns the ServerChan provider on env's HTTP client (for a nil
// env, see platforms.Env).
func New(env *platforms.Env) *Provider {
	d := shared.FromEnv(env)
	return &Provider{
		NoTargets: shared.NoTargets{Bots: "serverchan", Destination: "the bot's SendKey"},
		client:    d.Client,
		keyRe:     regexp.MustCompile(`^[A-Za-z0-9]{8,128}$`),
		v3Re:      regexp.MustCompile(`^sctp([0-9]+)t[A-Za-z0-9]+$`),
	}
}

func (p *Provider) parseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if err := botconfig.Decode("serverchan", raw, &c, configShape); err != nil {
		return c, err
	}
	switch {
	case c.SendKey == "":
		return c, botconfig.Missing("serverchan", "sendkey", "the SendKey from sct.ftqq.com or Server酱³")
	case !p.keyRe.MatchString(c.SendKey):
		return c, botconfig.Malformed("serverchan", "sendkey", "a SendKey is 8 to 128 letters and digits, e.g. SCT… or sctp…")
	}
	return c, botconfig.BaseURL("serverchan", "api_base", c.APIBase)
}

// endpoint is where a key's messages go.
func (p *Provider) endpoint(c Config) string {
	if m := p.v3Re.FindStringSubmatch(c.SendKey); m != nil {
		return botconfig.BaseOr(c.APIBase, "https://"+m[1]+".push.ft07.com") + "/send/" + c.SendKey + ".send"
	}
	return botconfig.BaseOr(c.APIBase, DefaultAPIBase) + "/" + c.SendKey + ".send"
}

// ValidateConfig implements push.Platform.
func (p *Provider) ValidateConfig(raw json.RawMessage) error {
	_, err := p.parseConfig(raw)
	return err
}

// ValidateMessage implements push.Platform: the desp must fit in 32 KB.
func (p *Provider) ValidateMessage(m push.Message, _ push.TargetType) error {
	if n := len(msgtext.Markdown(m)); n > MaxDesp {
		return push.Errorf(push.Invalid, "content_too_long", "the message is %d bytes as Markdown; ServerChan's limit is %d: shorten it", n, MaxDesp)
	}
	return nil
}

// answer is ServerChan's reply.
type answer struct {
	Code    *int   `json:"code"`
	Message string `json:"message"`
	Data    *struct {
		PushID json.RawMessage `json:"pushid"`
		Error  string          `json:"error"`
		Errno  int             `json:"errno"`
	} `json:"data"`
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	form := url.Values{"title": {msgtext.Title(d.Message, MaxTitle)}, "desp": {msgtext.Markdown(d.Message)}}
	req, err := http.NewRequest(http.MethodPost, p.endpoint(c), strings.NewReader(form.Encode()))
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "build request: the API URL is not valid")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(ctx, req)
	if err != nil {
		return push.Receipt{}, err
	}
	var ans answer
	if err := httpcall.DecodeOwn(resp, &ans, func() bool { return ans.Code != nil }, "no code in the answer", httpcall.Origin{Platform: "serverchan", Name: "ServerChan"}); err != nil {
		return push.Receipt{}, err
	}
	msg := botconfig.Redact(ans.Message, c.SendKey)
	if *ans.Code != 0 {
		if resp.Status >= 500 {
			return push.Receipt{}, &push.SendError{Outcome: push.OutcomeUncertain, Code: strconv.Itoa(*ans.Code), Message: msg}
		}
		return push.Receipt{}, push.DefinitiveError(strconv.Itoa(*ans.Code), "%s", msgtext.Or(msg, "refused"))
	}
	if ans.Data != nil && ans.Data.Errno != 0 {
		return push.Receipt{}, push.DefinitiveError(strconv.Itoa(ans.Data.Errno), "%s", msgtext.Or(botconfig.Redact(ans.Data.Error, c.SendKey), "refused"))
	}
	id := ""
	if ans.Data != nil {
		id = scalar(ans.Data.PushID)
	}
	if id == "" {
		return push.Receipt{}, httpcall.Unreadable(resp, fmt.Errorf("no pushid in the answer"))
	}
	return push.Receipt{PlatformIndex: id}, nil
}

// scalar reads a JSON string or number as text ("" for anything else).
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
