package queue

import (
	"context"
	"fmt"
)

// drain is the end of both queues' Stop: it waits for the running
// handlers (idle returns a channel closed while none runs) until ctx ends,
// then cancels the handlers' context and waits for them to return.
func drain(ctx context.Context, idle func() <-chan struct{}, cancel context.CancelFunc) error {
	var err error
	select {
	case <-idle():
	case <-ctx.Done():
		err = fmt.Errorf("queue: stopped running jobs after the drain timeout: %w", ctx.Err())
	}
	cancel()
	<-idle()
	return err
}
