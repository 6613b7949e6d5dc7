package wecom

import (
	"context"
	"encoding/json"

	"github.com/heraldpush/herald/push"
)

var _ push.Verifier = (*Provider)(nil)

// Verify implements push.Verifier. An application (mode app) is verified
// with a gettoken request, which sends nothing to anyone, outside the
// token cache (a refusal is not remembered, the token fetched is dropped);
// wrong credentials are Definitive with WeCom's errcode. It checks the
// corp id and the secret, not the agent id. A group robot (mode robot)
// has no call that authenticates without posting to the group: its
// webhook key is push.ErrCannotVerify.
func (p *Provider) Verify(ctx context.Context, raw json.RawMessage) error {
	c, err := p.parseConfig(raw)
	if err != nil {
		return push.DefinitiveError("", "%v", err)
	}
	if c.Mode != ModeApp {
		return push.ErrCannotVerify
	}
	_, tokenBase := p.bases(c)
	_, err = p.fetchToken(ctx, tokenBase, c)
	return err
}
