package push

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// handle works one job id from the queue. It sends only after moving the
// job from queued to running itself, so no two workers ever send one job,
// and a job found running (its worker died, or the queue delivered it
// again) is made uncertain instead of being sent a second time.
func (e *Engine) handle(ctx context.Context, id string) error {
	job, bot, target, reply, err := e.start(ctx, id)
	if err != nil || job == nil {
		return err
	}
	receipt, sendErr := e.deliver(ctx, *job, bot, target, reply)
	return e.finish(ctx, *job, receipt, sendErr)
}

// start claims a job for sending, with the reply it is sent as on a
// platform that takes replies only. It returns a nil job when there is
// nothing to send.
func (e *Engine) start(ctx context.Context, id string) (*Job, Bot, Target, *ReplyTo, error) {
	var (
		job     *Job
		bot     Bot
		target  Target
		reply   *ReplyTo
		settled bool
		wait    time.Duration
	)
	now := e.clock.Now()
	// A job whose request still waits in this process is known as it was
	// created: it is moved without being read first (the move checks that
	// it is still queued, and reads it when it is not).
	planned, known := e.handoff.plan(id)
	err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		job, settled, wait = nil, false, 0
		j := planned
		if !known {
			var err error
			if j, err = tx.Job(ctx, id); err != nil {
				return err
			}
		}
		for {
			switch j.State {
			case StateQueued:
				if !now.Before(j.ExpiresAt) {
					msg := fmt.Sprintf("not started within the queue-wait limit of %s", e.limits.QueueWait)
					_, err := e.settle(ctx, tx, ev, j, StateExpired, msg, "", now)
					settled = true
					return err
				}
				// Bots and targets never change: the catalog spares reading
				// them (and reads them through tx when it must, as the
				// transaction may hold the store's only connection).
				var err error
				if bot, err = e.catalog.bot(ctx, tx, j.BotID); err != nil {
					if IsKind(err, NotFound) {
						// Deleted since the job was queued (a delete
						// cancels the queued jobs it finds; this one came
						// after, from a node that had not seen it yet).
						settled = true
						_, err = e.settle(ctx, tx, ev, j, StateCanceled, "the bot was deleted before the job started"+pointsReturned(j), "", now)
					}
					return err
				}
				if j.TargetID != 0 {
					if target, err = e.catalog.target(ctx, tx, j.TargetID); err != nil {
						if IsKind(err, NotFound) {
							settled = true
							_, err = e.settle(ctx, tx, ev, j, StateCanceled, "the target was unbound before the job started"+pointsReturned(j), "", now)
						}
						return err
					}
				}
				if p, ok := e.platforms[j.Platform].(Pacer); ok {
					wait = p.Pace(Delivery{JobID: j.ID, Bot: bot, Target: target, AsType: j.TargetType, Message: j.Message})
					if wait > 0 {
						return nil // stays queued
					}
				}
				nj, err := tx.MoveJob(ctx, JobMove{ID: j.ID, From: StateQueued, To: StateRunning, At: now, Job: &j})
				if IsKind(err, Conflict) && ReasonOf(err) == ReasonStateChanged && nj.ID == j.ID && nj.State != StateQueued {
					j = nj // it moved meanwhile: decide on the job as it is
					continue
				}
				if err != nil {
					return err
				}
				job = &nj
				if _, ok := e.platforms[nj.Platform].(ReplyRules); ok && nj.TargetID != 0 {
					r, err := tx.JobReply(ctx, nj.ID)
					if err != nil && !IsKind(err, NotFound) {
						return err
					}
					if err == nil {
						reply = &r
					}
				}
				return nil
			case StateRunning:
				_, err := e.settle(ctx, tx, ev, j, StateUncertain, "the job was handed to a worker again while it was being sent (its worker stopped); delivery is unknown: check the platform, then resolve the job", "", now)
				settled = true
				return err
			default:
				return nil // already settled: a repeated queue delivery
			}
		}
	})
	if IsKind(err, NotFound) {
		e.log.Warn("queue delivered an unknown job id", "job", id)
		return nil, bot, target, nil, nil
	}
	if IsKind(err, Conflict) {
		return nil, bot, target, nil, nil // another worker or a cancel won the move
	}
	if err != nil {
		return nil, bot, target, nil, err
	}
	if settled {
		e.notify(ctx, id)
	}
	if wait > 0 {
		return nil, bot, target, nil, &DeferError{JobID: id, After: wait}
	}
	return job, bot, target, reply, nil
}

// maxAttempts caps the platform calls of one job.
const maxAttempts = 10

// deliver calls the platform, trying retryable failures again with
// exponential backoff while the job's send window lasts.
func (e *Engine) deliver(ctx context.Context, job Job, bot Bot, target Target, reply *ReplyTo) (Receipt, error) {
	p, ok := e.platforms[job.Platform]
	if !ok {
		return Receipt{}, DefinitiveError("", "the platform %q is not available on this server", job.Platform)
	}
	deadline := job.StartedAt.Add(e.limits.SendWindow)
	backoff := e.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, e.limits.AttemptTimeout)
		began := time.Now()
		receipt, err := p.Send(actx, Delivery{
			JobID: job.ID, Bot: bot, Target: target, AsType: job.TargetType, Message: job.Message, Attempt: attempt, Reply: reply,
		})
		took := time.Since(began)
		cancel()
		if err == nil {
			e.obs.PlatformCall(job.Platform, took, "ok")
			return receipt, nil
		}
		se := AsSendError(err)
		e.obs.PlatformCall(job.Platform, took, se.Outcome.String())
		if se.Outcome != OutcomeRetryable {
			return Receipt{}, se
		}
		wait := backoff
		if se.RetryAfter > wait {
			wait = se.RetryAfter
		}
		backoff *= 2
		if attempt >= maxAttempts || e.clock.Now().Add(wait).After(deadline) {
			return Receipt{}, DefinitiveError(se.Code, "gave up after %d attempts in the send window of %s; nothing was delivered; last error: %s", attempt, e.limits.SendWindow, se.Error())
		}
		e.log.Info("retrying platform send", "job", job.ID, "platform", job.Platform, "attempt", attempt, "wait", wait, "err", se.Error())
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Receipt{}, DefinitiveError(se.Code, "the worker stopped before the message could be sent; nothing was delivered; last error: %s", se.Error())
		}
	}
}

// finish records the outcome of a send.
func (e *Engine) finish(ctx context.Context, job Job, receipt Receipt, sendErr error) error {
	to, msg := StateSucceeded, ""
	if sendErr != nil {
		se := AsSendError(sendErr)
		msg = job.Platform + ": " + se.Error()
		if se.Outcome == OutcomeDefinitive {
			to = StateFailed
		} else {
			to = StateUncertain
			msg += "; the platform may have received the message: check it, then resolve the job"
		}
	}
	// The outcome must be recorded even when the worker is being stopped.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	now := e.clock.Now()
	err := e.update(wctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		_, err := e.settle(ctx, tx, ev, job, to, msg, receipt.PlatformIndex, now)
		return err
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || IsKind(err, Unavailable) {
			e.log.Error("recording a send outcome failed; the job stays running and becomes uncertain on recovery", "job", job.ID, "outcome", to, "err", err)
		}
		return err
	}
	// One line per outcome: failed and uncertain jobs are worth reading.
	switch to {
	case StateFailed:
		e.log.Info("job settled", "job", job.ID, "platform", job.Platform, "state", to, "err", msg)
	case StateUncertain:
		e.log.Warn("job settled", "job", job.ID, "platform", job.Platform, "state", to, "err", msg)
	default:
		e.log.Debug("job settled", "job", job.ID, "platform", job.Platform, "state", to)
	}
	e.notify(ctx, job.ID)
	return nil
}

// pointsReturned is what a canceled or expired job's error adds when it
// had points to return.
func pointsReturned(j Job) string {
	if j.Cost > 0 {
		return "; points returned"
	}
	return ""
}
