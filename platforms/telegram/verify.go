package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier with getMe, the Bot API's cheapest
// authenticated call: it sends nothing to anyone. A refused token (401,
// or 404 for a token Telegram does not know the shape of) is Definitive.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	cfg, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	resp, err := p.client.PostJSON(ctx, p.endpoint(cfg)+"getMe", map[string]any{}, http.Header{})
	if err != nil {
		return err
	}
	var ans apiAnswer
	if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil {
		return p.unreadable(resp.Status)
	}
	if ans.OK {
		return nil
	}
	code := ans.ErrorCode
	if code == 0 {
		code = resp.Status
	}
	if code == http.StatusUnauthorized || code == http.StatusNotFound {
		return push.DefinitiveError(strconv.Itoa(code), "Telegram refused the bot token (%s): check it in @BotFather", describe(ans.Description, code))
	}
	return classify(resp.Status, ans)
}

// unreadable classifies a getMe answer that is not the Bot API's JSON.
func (p *Provider) unreadable(status int) error {
	if status >= 500 || status == http.StatusTooManyRequests {
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: strconv.Itoa(status), Message: "HTTP " + strconv.Itoa(status) + " from the Bot API or a gateway in front of it"}
	}
	return push.DefinitiveError(strconv.Itoa(status), "HTTP %d with a body that is not the Bot API's: check api_base", status)
}

// describe is the Bot API's description, or the status text when it gave
// none.
func describe(desc string, code int) string {
	if desc == "" {
		return http.StatusText(code)
	}
	return desc
}
