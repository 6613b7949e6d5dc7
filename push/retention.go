package push

import (
	"context"
	"time"
)

// The deletions of the retention run in batches of these sizes, each in a
// transaction of its own with a pause between them, so that sends never
// wait long behind one.
const (
	pruneBatch    = 500
	pruneBreather = 20 * time.Millisecond
	// eventRetention is how long a bot's event ids are kept: platforms
	// deliver an event again for a day at most.
	eventRetention = 7 * 24 * time.Hour
)

// forgetEvery runs forget every interval until ctx ends.
func (e *Engine) forgetEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := e.forget(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("deleting what the retention no longer keeps failed; the next sweep tries again", "err", err)
			}
		}
	}
}

// forget deletes what the retention no longer keeps: idempotency records
// older than Limits.IdempotencyTTL, event ids older than a week, and jobs
// that ended for good longer than Limits.JobRetention ago.
func (e *Engine) forget(ctx context.Context) error {
	now := e.clock.Now()
	n, err := inBatches(ctx, func(ctx context.Context) (int, error) {
		n, err := e.store.DeleteIdempotencyBefore(ctx, now.Add(-e.limits.IdempotencyTTL), pruneBatch)
		return int(n), err
	})
	if n > 0 {
		e.log.Info("idempotency records deleted after their retention", "count", n, "retention", e.limits.IdempotencyTTL.String())
	}
	if err != nil {
		return err
	}
	if _, err := e.store.ForgetEventsBefore(ctx, now.Add(-eventRetention)); err != nil {
		return err
	}
	if e.limits.JobRetention < 0 {
		return nil
	}
	before := now.Add(-e.limits.JobRetention)
	n, err = inBatches(ctx, func(ctx context.Context) (int, error) {
		return e.store.PruneJobs(ctx, before, pruneBatch)
	})
	if n > 0 {
		e.log.Info("jobs deleted after the job retention", "count", n, "retention", e.limits.JobRetention.String(), "endedBefore", before)
	}
	return err
}

// inBatches runs del until it deletes less than a whole batch, pausing
// between batches, and returns how many it deleted in all.
func inBatches(ctx context.Context, del func(ctx context.Context) (int, error)) (int, error) {
	total := 0
	for {
		n, err := del(ctx)
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
		t := time.NewTimer(pruneBreather)
		select {
		case <-ctx.Done():
			t.Stop()
			return total, ctx.Err()
		case <-t.C:
		}
	}
}
