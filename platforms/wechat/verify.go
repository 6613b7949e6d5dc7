package wechat

import (
	"context"
	"encoding/json"

	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier with a token request, which sends
// nothing to anyone, outside the token cache (a refusal is not
// remembered, the token fetched is dropped). It asks the stable endpoint,
// which hands back the account's current stable token without replacing
// it, even for a bot on the classic endpoint: a classic request would
// issue a new token and cut short the one every server of the account
// uses, and WeChat keeps the two apart. Only a bot whose token_base is
// its own (a token service that may speak classic only) is verified
// through its configured endpoint. Wrong credentials are Definitive with
// WeChat's errcode.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	c, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	if c.TokenBase == "" {
		c.TokenAPI = TokenStable
	}
	_, err = p.fetchToken(c)(ctx)
	return err
}
