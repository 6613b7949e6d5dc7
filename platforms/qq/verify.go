package qq

import (
	"context"
	"encoding/json"

	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier with a fresh app access token request
// (getAppAccessToken), which sends nothing to anyone. The token cache is
// left alone: a refusal is not remembered for the saved credentials, and
// the token fetched is dropped. Wrong credentials are Definitive with
// QQ's error code.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	c, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	_, err = p.fetchToken(c)(ctx)
	return err
}
