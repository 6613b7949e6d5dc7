package feishu

import (
	"context"
	"encoding/json"

	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier with a tenant access token request,
// which sends nothing to anyone, outside the token cache (a refusal is not
// remembered, the token fetched is dropped). Wrong credentials are
// Definitive with Feishu's error code.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	c, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	_, err = p.fetchToken(ctx, p.tokenBase(c), c)
	return err
}
