package push

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// handle works one job id from the queue. It sends only after moving the
// job from queued to running itself (or claiming a running job that
// waits to retry), so no two workers ever send one job, and a job found
// running and not waiting (its worker died, or the queue delivered it
// again) is made uncertain instead of being sent a second time.
//
// A worker makes one platform call per job it is handed: a retryable
// failure hands the job back to the queue, due at its next attempt, so
// that a platform that is down holds no worker while its jobs wait.
func (e *Engine) handle(ctx context.Context, id string) error {
	s, err := e.start(ctx, id)
	if err != nil || s.job == nil {
		return err
	}
	return e.send(ctx, s)
}

// send makes the platform call of a job claimed for sending, holding the
// slot of its bot that the claim took, and records what came of it: an
// outcome, or a wait before the next attempt.
func (e *Engine) send(ctx context.Context, s started) error {
	defer e.holdSlot(ctx, s.job.BotID, s.job.ID)()
	receipt, wait, sendErr := e.deliver(ctx, *s.job, s.bot, s.target, s.reply)
	if wait > 0 {
		e.jobBots.note(s.job.ID, s.job.BotID)
		return e.park(ctx, *s.job, sendErr, wait)
	}
	e.jobBots.forget(s.job.ID)
	return e.finish(ctx, *s.job, receipt, sendErr)
}

// started is a job a worker claimed for sending, with its bot, its target
// and the reply it is sent as on a platform that takes replies only. A nil
// job means there is nothing to send.
type started struct {
	job    *Job
	bot    Bot
	target Target
	reply  *ReplyTo
}

// retryGrace is how late past its send window a job that waited to retry
// may still make its next attempt (its workers were stopped or busy when
// it was due).
const retryGrace = time.Minute

// start claims a job for sending, holding a slot of its bot (see
// SendSlots) when it returns one.
func (e *Engine) start(ctx context.Context, id string) (started, error) {
	var (
		s       started
		settled bool
		wait    time.Duration
		busyBot int64 // the bot whose slots were all taken
		slotBot int64 // the bot whose slot this start holds
	)
	now := e.clock.Now()
	// A job whose request still waits in this process is known as it was
	// created: it is moved without being read first (the move checks that
	// it is still queued, and reads it when it is not).
	planned, known := e.handoff.plan(id)
	// The bot's slot is asked for before the store is read when the bot
	// is known: a bot at its cap turns its jobs away without a read.
	botID, botKnown := e.jobBots.bot(id)
	if known {
		botID, botKnown = planned.BotID, true
	}
	if botKnown {
		if !e.acquireSlot(ctx, botID, id) {
			return started{}, &DeferError{JobID: id, After: e.busyDelay(), Busy: true}
		}
		slotBot = botID
	}
	// Any other job is read with those that other workers start at the
	// same moment (see jobReads); its claim checks it as it checks a
	// planned one.
	read := false
	if !known {
		planned, read = e.readJob(ctx, id)
	}
	// A platform's send slot is claimed once per start: a planned job
	// found moved on (it waits to retry) is not paced a second time.
	paced := false
	pace := func(j Job, bot Bot, target Target) time.Duration {
		if paced {
			return 0
		}
		w := e.pace(j, bot, target)
		paced = w == 0
		return w
	}
	claimSlot := func(botID int64) bool {
		if slotBot == botID {
			return true
		}
		if !e.acquireSlot(ctx, botID, id) {
			busyBot = botID
			return false
		}
		slotBot = botID
		return true
	}
	err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		s, settled, wait, busyBot = started{}, false, 0, 0
		j := planned
		if !known && !read {
			var err error
			if j, err = tx.Job(ctx, id); err != nil {
				return err
			}
		}
		for {
			switch j.State {
			case StateQueued:
				if !now.Before(j.ExpiresAt) {
					_, err := e.settle(ctx, tx, ev, j, StateExpired, e.expiredMessage(j), "", now)
					settled = true
					return err
				}
				// Bots and targets never change: the catalog spares reading
				// them (and reads them through tx when it must, as the
				// transaction may hold the store's only connection).
				var err error
				if s.bot, err = e.catalog.bot(ctx, tx, j.BotID); err != nil {
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
					if s.target, err = e.catalog.target(ctx, tx, j.TargetID); err != nil {
						if IsKind(err, NotFound) {
							settled = true
							_, err = e.settle(ctx, tx, ev, j, StateCanceled, "the target was unbound before the job started"+pointsReturned(j), "", now)
						}
						return err
					}
				}
				if !claimSlot(j.BotID) {
					return nil // stays queued
				}
				if wait = pace(j, s.bot, s.target); wait > 0 {
					return nil // stays queued
				}
				nj, err := tx.MoveJob(ctx, JobMove{ID: j.ID, From: StateQueued, To: StateRunning, At: now, Job: &j})
				if IsKind(err, Conflict) && ReasonOf(err) == ReasonStateChanged && nj.ID == j.ID && nj.State != StateQueued {
					j = nj // it moved meanwhile: decide on the job as it is
					continue
				}
				if err != nil {
					return err
				}
				s.job = &nj
				return e.readReply(ctx, tx, &s)
			case StateRunning:
				if j.RetryAt.IsZero() {
					_, err := e.settle(ctx, tx, ev, j, StateUncertain, "the job was handed to a worker again while it was being sent (its worker stopped); delivery is unknown: check the platform, then resolve the job", "", now)
					settled = true
					return err
				}
				return e.resume(ctx, tx, ev, j, now, &s, &settled, &wait, claimSlot, pace)
			default:
				return nil // already settled: a repeated queue delivery
			}
		}
	})
	if err != nil || s.job == nil {
		if slotBot != 0 {
			e.releaseSlot(ctx, slotBot, id)
		}
	}
	if IsKind(err, NotFound) {
		e.log.Warn("queue delivered an unknown job id", "job", id)
		return started{}, nil
	}
	if IsKind(err, Conflict) {
		return started{}, nil // another worker or a cancel won the move
	}
	if err != nil {
		return started{}, err
	}
	if settled {
		e.notify(ctx, id)
	}
	if busyBot != 0 {
		e.jobBots.note(id, busyBot)
		return started{}, &DeferError{JobID: id, After: e.busyDelay(), Busy: true}
	}
	if wait > 0 {
		return started{}, &DeferError{JobID: id, After: wait}
	}
	if s.job != nil && known {
		e.handoff.unplan(id)
	}
	return s, nil
}

// resume decides on a running job that waits to retry (j.RetryAt is
// set): not due yet, it goes back to the queue until it is; due, it is
// claimed for sending again; past its send window, or without its bot or
// target any more, it fails (its earlier attempts sent nothing).
func (e *Engine) resume(ctx context.Context, tx Tx, ev *txEvents, j Job, now time.Time, s *started, settled *bool, wait *time.Duration,
	claimSlot func(int64) bool, pace func(Job, Bot, Target) time.Duration) error {
	if now.Before(j.RetryAt) {
		*wait = j.RetryAt.Sub(now)
		return nil
	}
	fail := func(msg string) error {
		*settled = true
		_, err := e.settle(ctx, tx, ev, j, StateFailed, msg, "", now)
		return err
	}
	var err error
	if s.bot, err = e.catalog.bot(ctx, tx, j.BotID); err != nil {
		if IsKind(err, NotFound) {
			return fail("the bot was deleted while the job waited to retry; nothing was delivered")
		}
		return err
	}
	if j.TargetID != 0 {
		if s.target, err = e.catalog.target(ctx, tx, j.TargetID); err != nil {
			if IsKind(err, NotFound) {
				return fail("the target was unbound while the job waited to retry; nothing was delivered")
			}
			return err
		}
	}
	if now.After(j.StartedAt.Add(e.limits.SendWindow + retryGrace)) {
		return fail(fmt.Sprintf("gave up after %d attempts: the send window of %s ended while the job waited to retry (the workers were stopped or busy); nothing was delivered; last error: %s",
			j.Attempts, e.limits.SendWindow, j.Error))
	}
	if !claimSlot(j.BotID) {
		return nil // waits on
	}
	if *wait = pace(j, s.bot, s.target); *wait > 0 {
		return nil // waits on
	}
	nj, err := tx.ResumeJob(ctx, j.ID, j.RetryAt, now)
	if err != nil {
		return err // a Conflict: another worker claimed it, or it moved
	}
	s.job = &nj
	return e.readReply(ctx, tx, s)
}

// pace asks a pacing platform for a send slot for the job and returns how
// long to wait when there is none yet.
func (e *Engine) pace(j Job, bot Bot, target Target) time.Duration {
	if p, ok := e.platforms[j.Platform].(Pacer); ok {
		return p.Pace(paced(j, bot, target))
	}
	return 0
}

// unpace gives back the send slot pace claimed for a job that will not be
// sent as claimed (its request was refused), where the platform can.
func (e *Engine) unpace(j Job, bot Bot, target Target) {
	if p, ok := e.platforms[j.Platform].(PaceReleaser); ok {
		p.ReleasePace(paced(j, bot, target))
	}
}

// paced is the delivery a job's pacing slot is claimed for.
func paced(j Job, bot Bot, target Target) Delivery {
	return Delivery{JobID: j.ID, Bot: bot, Target: target, AsType: j.TargetType, Message: j.Message}
}

// readReply reads the reply a claimed job is sent as, on a platform that
// takes replies only.
func (e *Engine) readReply(ctx context.Context, tx Tx, s *started) error {
	j := s.job
	if _, ok := e.platforms[j.Platform].(ReplyRules); !ok || j.TargetID == 0 {
		return nil
	}
	r, err := tx.JobReply(ctx, j.ID)
	if err != nil && !IsKind(err, NotFound) {
		return err
	}
	if err == nil {
		s.reply = &r
	}
	return nil
}

// maxAttempts caps the platform calls of one job.
const maxAttempts = 10

// deliver makes one platform call for the job. A retryable failure that
// leaves time in the job's send window (and attempts under maxAttempts)
// also returns how long to wait before the next attempt, with backoff
// doubling per attempt; otherwise the failure is the outcome.
func (e *Engine) deliver(ctx context.Context, job Job, bot Bot, target Target, reply *ReplyTo) (Receipt, time.Duration, error) {
	p, ok := e.platforms[job.Platform]
	if !ok {
		return Receipt{}, 0, DefinitiveError("", "the platform %q is not available on this server", job.Platform)
	}
	actx, cancel := context.WithTimeout(ctx, e.limits.AttemptTimeout)
	began := time.Now()
	receipt, err := p.Send(actx, Delivery{
		JobID: job.ID, Bot: bot, Target: target, AsType: job.TargetType, Message: job.Message, Attempt: job.Attempts, Reply: reply,
	})
	took := time.Since(began)
	cancel()
	if err == nil {
		e.obs.PlatformCall(job.Platform, took, "ok")
		return receipt, 0, nil
	}
	se := AsSendError(err)
	e.obs.PlatformCall(job.Platform, took, se.Outcome.String())
	if se.Outcome != OutcomeRetryable {
		return Receipt{}, 0, se
	}
	wait := e.opts.RetryBackoff << min(max(job.Attempts-1, 0), maxAttempts)
	if se.RetryAfter > wait {
		wait = se.RetryAfter
	}
	deadline := job.StartedAt.Add(e.limits.SendWindow)
	if job.Attempts >= maxAttempts || e.clock.Now().Add(wait).After(deadline) {
		return Receipt{}, 0, DefinitiveError(se.Code, "gave up after %d attempts in the send window of %s; nothing was delivered; last error: %s", job.Attempts, e.limits.SendWindow, se.detail())
	}
	return Receipt{}, wait, se
}

// park hands a job whose platform call failed retryably back to the
// queue, due after wait: it stays running, waiting to retry, in the store
// (where a restart finds it) and in the queue, and holds no worker.
func (e *Engine) park(ctx context.Context, job Job, sendErr error, wait time.Duration) error {
	se := AsSendError(sendErr)
	now := e.clock.Now()
	until := now.Add(wait)
	msg := fmt.Sprintf("%s: %s; attempt %d sent nothing, trying again at %s", job.Platform, se.Error(), job.Attempts, until.UTC().Format(time.RFC3339))
	// The wait must be recorded even when the worker is being stopped.
	err := e.recordOutcome(ctx, job, func(ctx context.Context, tx Tx, _ *txEvents) error {
		return tx.ParkJob(ctx, job.ID, until, now, msg)
	})
	if err != nil {
		e.log.Error("handing a job back to the queue for a retry failed; the job stays running and becomes uncertain on recovery", "job", job.ID, "err", err)
		return err
	}
	e.log.Info("retrying platform send", "job", job.ID, "platform", job.Platform, "attempt", job.Attempts, "wait", wait, "err", se.Error())
	return &DeferError{JobID: job.ID, After: wait}
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
	now := e.clock.Now()
	var settled Job
	err := e.recordOutcome(ctx, job, func(ctx context.Context, tx Tx, ev *txEvents) error {
		var err error
		settled, err = e.settle(ctx, tx, ev, job, to, msg, receipt.PlatformIndex, now)
		return err
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || IsKind(err, Unavailable) {
			e.log.Error("recording a send outcome failed until its time ran out; the job stays running and becomes uncertain on recovery", "job", job.ID, "outcome", to, "err", err)
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
	e.notifySettled(ctx, settled)
	return nil
}

// outcomeTry bounds one try to record an outcome, so that a write stuck
// on a dead connection gives way to a new one.
const outcomeTry = 15 * time.Second

// recordOutcome runs fn, which records what the platform answered, until
// it succeeds: a worker that knows the answer must not leave the job to
// recovery (and uncertain) because the database was away for a moment.
// It tries again with a backoff of up to 2 s while the store is
// unavailable, for the attempt timeout plus a minute (within which the
// job is not yet taken for stale), and goes on when the worker is being
// stopped: the queue's drain waits for it. A try whose commit succeeded
// but whose answer was lost makes the next one a Conflict: the outcome
// is then recorded already.
func (e *Engine) recordOutcome(ctx context.Context, job Job, fn func(ctx context.Context, tx Tx, ev *txEvents) error) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.limits.OutcomeGrace())
	defer cancel()
	backoff := 50 * time.Millisecond
	for try := 1; ; try++ {
		tctx, tcancel := context.WithTimeout(wctx, outcomeTry)
		err := e.update(tctx, fn)
		tcancel()
		transient := IsKind(err, Unavailable) || errors.Is(err, context.DeadlineExceeded)
		switch {
		case err == nil:
			if try > 1 {
				e.log.Info("send outcome recorded after the store came back", "job", job.ID, "tries", try)
			}
			return nil
		case try > 1 && IsKind(err, Conflict) && ReasonOf(err) == ReasonStateChanged:
			e.log.Info("send outcome already recorded by an earlier try whose answer was lost", "job", job.ID, "tries", try)
			return nil
		case !transient || wctx.Err() != nil:
			return err
		}
		if try == 1 {
			e.log.Warn("recording a send outcome failed; trying again", "job", job.ID, "err", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			return err
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// pointsReturned is what a canceled or expired job's error adds when it
// had points to return.
func pointsReturned(j Job) string {
	if j.Cost > 0 {
		return "; points returned"
	}
	return ""
}
