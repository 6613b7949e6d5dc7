package ntfy

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier with GET /v1/account, which publishes
// nothing: ntfy answers 401 for credentials it does not know (Definitive)
// and names the user it authenticated. It checks the credentials, not the
// user's write access to the topic. A bot without credentials, or a server
// that ignores them (no access control: it answers as the anonymous user
// "*") or has no /v1/account (before ntfy 2.0), cannot be verified:
// push.ErrCannotVerify.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	c, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	header := authHeader(c)
	if len(header) == 0 {
		return push.ErrCannotVerify
	}
	req, err := http.NewRequest(http.MethodGet, botconfig.BaseOr(c.Server, DefaultServer)+"/v1/account", nil)
	if err != nil {
		return push.DefinitiveError("", "the server URL cannot be requested: check server")
	}
	req.Header = header
	resp, err := p.client.Do(ctx, req)
	if err != nil {
		return err
	}
	var ans struct {
		Username string `json:"username"`
		Code     int    `json:"code"`
		Error    string `json:"error"`
	}
	jerr := json.Unmarshal(resp.Body, &ans)
	switch {
	case resp.Status == http.StatusOK && jerr == nil && ans.Username != "" && ans.Username != "*":
		return nil
	case resp.Status == http.StatusOK && jerr == nil:
		return push.ErrCannotVerify // the server has no access control
	case resp.Status == http.StatusUnauthorized && jerr == nil && ans.Code != 0:
		what := "access token"
		if c.Token == "" {
			what = "user and password"
		}
		return push.DefinitiveError(strconv.Itoa(ans.Code), "ntfy refused the %s (%s): check them on the server (ntfy token list, ntfy user list)", what, ans.Error)
	case resp.Status == http.StatusNotFound:
		return push.ErrCannotVerify // a server before ntfy 2.0
	case (resp.Status == http.StatusTooManyRequests || resp.Status >= 500) && jerr == nil && ans.Error != "":
		// 42909: too many failed authentications from this address.
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: strconv.Itoa(ans.Code),
			Message: "ntfy could not check the credentials now (HTTP " + strconv.Itoa(resp.Status) + "): " + ans.Error}
	case resp.Status == http.StatusTooManyRequests || resp.Status >= 500:
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: strconv.Itoa(resp.Status),
			Message: "HTTP " + strconv.Itoa(resp.Status) + " from the ntfy server or a proxy in front of it"}
	}
	return httpcall.Foreign(resp, jerr, httpcall.Origin{Platform: "ntfy", Name: "ntfy"})
}
