package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errStillRunning says that Stop returned while handlers that were told
// to stop (their context canceled) still ran.
var errStillRunning = errors.New("queue: handlers still run after they were told to stop; Stop returns without them")

// cancelGrace is how long Stop waits by default for handlers after
// canceling their context: longer than the engine's default
// push.Limits.OutcomeGrace.
const cancelGrace = 2 * time.Minute

// drain is the end of both queues' Stop: it waits for the running
// handlers (idle returns a channel closed while none runs) until ctx ends,
// then cancels the handlers' context and waits up to grace for them to
// return. A handler that ignores its context cannot make Stop wait
// forever: after grace, drain returns errStillRunning.
func drain(ctx context.Context, idle func() <-chan struct{}, cancel context.CancelFunc, grace time.Duration) error {
	var err error
	select {
	case <-idle():
	case <-ctx.Done():
		err = fmt.Errorf("queue: stopped running jobs after the drain timeout: %w", ctx.Err())
	}
	cancel()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-idle():
		return err
	case <-t.C:
		return errors.Join(err, fmt.Errorf("%w (waited %s)", errStillRunning, grace))
	}
}
