package push

import (
	"context"
	"time"
)

// JobService holds the verbs on jobs: reading, canceling and resolving
// them. Get it from Engine.Jobs.
type JobService struct{ e *Engine }

// Jobs returns the verbs on jobs.
func (e *Engine) Jobs() *JobService { return &e.jobs }

// Get returns a job of an account the principal sees. A job of another
// account is NotFound, as if it did not exist.
func (s *JobService) Get(ctx context.Context, p Principal, id string) (Job, error) {
	if !ValidJobID(id) {
		return Job{}, fieldErrorf(FieldJob, "invalid_job_id", "%q is not a job id: give the job id (a UUID) that the send returned", truncate(id, 40)).with(truncate(id, 40), 0)
	}
	j, err := s.e.store.Job(ctx, id)
	if IsKind(err, NotFound) || err == nil && !p.sees(j.AccountID) {
		return Job{}, jobNotFound(id)
	}
	return j, err
}

func jobNotFound(id string) error {
	return Errorf(NotFound, "job_not_found", "job %s does not exist in your account: check the job id", id)
}

// Keyed is what an idempotency key stands for: the kind of request it was
// used for and that request's jobs.
type Keyed struct {
	Key       string
	Kind      RequestKind
	Jobs      []Job
	CreatedAt time.Time
}

// ByIdempotencyKey returns the request that the principal's account made
// with an idempotency key, or NotFound when there is none (never used, or
// older than the retention).
func (s *JobService) ByIdempotencyKey(ctx context.Context, p Principal, key string) (Keyed, error) {
	if err := ValidateIdempotencyKey(key); err != nil {
		return Keyed{}, err
	}
	rec, err := s.e.store.Idempotency(ctx, p.AccountID, key)
	if err != nil {
		return Keyed{}, err
	}
	jobs, err := s.e.store.Jobs(ctx, rec.JobIDs)
	if err != nil {
		return Keyed{}, err
	}
	return Keyed{Key: rec.Key, Kind: rec.Kind, Jobs: jobs, CreatedAt: rec.CreatedAt}, nil
}

// Cancel cancels a queued job of an account the principal sees and
// returns its points. A job that is no longer queued is a Conflict.
func (s *JobService) Cancel(ctx context.Context, p Principal, id string) (Job, error) {
	if _, err := s.Get(ctx, p, id); err != nil {
		return Job{}, err
	}
	return s.e.move(ctx, id, StateQueued, StateCanceled, "canceled by the caller", "job_not_queued",
		"job %s is %s and can no longer be canceled: only queued jobs can be")
}

// Resolve settles an uncertain job of an account the principal sees as
// succeeded or failed, after a person or a check has verified what the
// platform received.
func (s *JobService) Resolve(ctx context.Context, p Principal, id string, outcome State) (Job, error) {
	if outcome != StateSucceeded && outcome != StateFailed {
		return Job{}, Errorf(Invalid, "invalid_outcome", "an uncertain job can be resolved as succeeded or failed, not %q", truncate(string(outcome), 40))
	}
	if _, err := s.Get(ctx, p, id); err != nil {
		return Job{}, err
	}
	note := "resolved by an operator"
	if !p.Operator() {
		note = "resolved by the account"
	}
	return s.e.move(ctx, id, StateUncertain, outcome, note, "job_not_uncertain",
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
