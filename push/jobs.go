package push

import (
	"context"
	"time"
)

// Job returns one of the account's jobs. A job of another account is
// NotFound, as if it did not exist.
func (e *Engine) Job(ctx context.Context, accountID int64, id string) (Job, error) {
	j, err := e.JobByID(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if j.AccountID != accountID {
		return Job{}, jobNotFound(id)
	}
	return j, nil
}

// JobByID returns any job, whatever its account (for operators).
func (e *Engine) JobByID(ctx context.Context, id string) (Job, error) {
	if !ValidJobID(id) {
		return Job{}, Errorf(Invalid, "invalid_job_id", "%q is not a job id: give the jobId (a UUID) from a send response", truncate(id, 40))
	}
	j, err := e.store.Job(ctx, id)
	if IsKind(err, NotFound) {
		return Job{}, jobNotFound(id)
	}
	return j, err
}

func jobNotFound(id string) error {
	return Errorf(NotFound, "job_not_found", "job %s does not exist in your account: check the jobId", id)
}

// Keyed is what an Idempotency-Key stands for: the kind of request it was
// used for and that request's jobs.
type Keyed struct {
	Key       string
	Kind      RequestKind
	Jobs      []Job
	CreatedAt time.Time
}

// JobsByIdempotencyKey returns the request that the account made with an
// Idempotency-Key, or NotFound when there is none (never used, or older
// than the retention).
func (e *Engine) JobsByIdempotencyKey(ctx context.Context, accountID int64, key string) (Keyed, error) {
	if err := ValidateIdempotencyKey(key); err != nil {
		return Keyed{}, err
	}
	rec, err := e.store.Idempotency(ctx, accountID, key)
	if err != nil {
		return Keyed{}, err
	}
	jobs, err := e.store.Jobs(ctx, rec.JobIDs)
	if err != nil {
		return Keyed{}, err
	}
	return Keyed{Key: rec.Key, Kind: rec.Kind, Jobs: jobs, CreatedAt: rec.CreatedAt}, nil
}

// Cancel cancels one of the account's queued jobs and returns its points.
// A job that is no longer queued is a Conflict.
func (e *Engine) Cancel(ctx context.Context, accountID int64, id string) (Job, error) {
	if _, err := e.Job(ctx, accountID, id); err != nil {
		return Job{}, err
	}
	return e.move(ctx, id, StateQueued, StateCanceled, "canceled by the caller", "job_not_queued",
		"job %s is %s and can no longer be canceled: only queued jobs can be")
}

// Resolve settles an uncertain job as succeeded or failed, after a person
// or a check has verified what the platform received.
func (e *Engine) Resolve(ctx context.Context, id string, outcome State) (Job, error) {
	if outcome != StateSucceeded && outcome != StateFailed {
		return Job{}, Errorf(Invalid, "invalid_outcome", "an uncertain job can be resolved as succeeded or failed, not %q", outcome)
	}
	if _, err := e.JobByID(ctx, id); err != nil {
		return Job{}, err
	}
	return e.move(ctx, id, StateUncertain, outcome, "resolved by an operator", "job_not_uncertain",
		"job %s is %s: only uncertain jobs can be resolved")
}

// move makes one requested move of a job with its side effects, refusing
// with a Conflict when the job is not in state from.
func (e *Engine) move(ctx context.Context, id string, from, to State, note, reason, refusal string) (Job, error) {
	var out Job
	err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		j, err := tx.Job(ctx, id)
		if err != nil {
			return err
		}
		if j.State != from {
			return Errorf(Conflict, reason, refusal, id, j.State)
		}
		msg := j.Error
		if to != StateSucceeded {
			if msg != "" {
				msg += "; "
			}
			msg += note
		}
		out, err = e.settle(ctx, tx, ev, j, to, msg, j.PlatformIndex, e.clock.Now())
		return err
	})
	if err != nil {
		if ReasonOf(err) == ReasonStateChanged {
			return Job{}, Errorf(Conflict, reason, "job %s changed state meanwhile: query it again", id)
		}
		return Job{}, err
	}
	e.notify(ctx, id)
	return out, nil
}
