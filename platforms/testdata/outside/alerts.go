package main

import (
	"context"
	"fmt"

	"github.com/heraldpush/herald/push"
)

// alerts is the application's own use of an engine that its test checks
// with package pushtest: it announces each deploy through one bot to one
// target, once per version however often it is called.
type alerts struct {
	eng                *push.Engine
	account, bot, dest int64
}

// deployed announces version and returns its job as the send left it.
// The version is the idempotency key: a second call for one version
// (after a crash, say) sends nothing again and returns the first call's
// job. A job the platform refused, or whose delivery is uncertain, is an
// error.
func (a alerts) deployed(ctx context.Context, version string) (push.Job, error) {
	res, err := a.eng.Send(ctx, push.AccountPrincipal(a.account), push.SendRequest{
		BotID: a.bot, TargetID: a.dest, IdempotencyKey: "deploy-" + version,
		Message: push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** " + version},
	})
	if err != nil {
		return push.Job{}, fmt.Errorf("announce %s: %w", version, err)
	}
	j := res.Jobs[0]
	switch j.State {
	case push.StateFailed:
		return j, fmt.Errorf("announce %s: the platform refused it: %s", version, j.Error)
	case push.StateUncertain:
		return j, fmt.Errorf("announce %s: it may or may not have arrived (job %s): %s", version, j.ID, j.Error)
	}
	return j, nil
}
