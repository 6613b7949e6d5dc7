package wechat

import (
	"context"
	"encoding/json"

	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier with a token request, which sends
// nothing to anyone, outside the token cache (a refusal is not
// remembered, the token fetched is dropped). The stable endpoint, the
// default, hands back the account's current token without replacing it;
// the classic one issues a new token, and the one in use stays valid for
// five minutes (a send refused with it fetches the new one). Wrong
// credentials are Definitive with WeChat's errcode.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	c, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	_, err = p.fetchToken(c)(ctx)
	return err
}
