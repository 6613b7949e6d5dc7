package push

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
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
	return Errorf(NotFound, "job_not_found", "job %s does not exist in your account: check the job id (a job that ended is deleted after the job retention, 90 days unless the server sets another)", id)
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
// platform received. The job keeps who resolved it, when, and the note;
// its error ("check it, then resolve it") is dropped.
func (s *JobService) Resolve(ctx context.Context, p Principal, id string, outcome State, note string) (Job, error) {
	e := s.e
	if outcome != StateSucceeded && outcome != StateFailed {
		return Job{}, Errorf(Invalid, "invalid_outcome", "an uncertain job can be resolved as succeeded or failed, not %q", truncate(string(outcome), 40))
	}
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxNote || !utf8.ValidString(note) {
		return Job{}, Errorf(Invalid, "invalid_note", "the note must be valid UTF-8 of at most %d characters", MaxNote)
	}
	if _, err := s.Get(ctx, p, id); err != nil {
		return Job{}, err
	}
	var out Job
	err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		j, err := tx.Job(ctx, id)
		if err != nil {
			return err
		}
		if j.State != StateUncertain {
			return Errorf(Conflict, "job_not_uncertain", "job %s is %s: only uncertain jobs can be resolved", id, j.State)
		}
		now := e.clock.Now()
		msg := ""
		if outcome == StateFailed {
			msg = "resolved as failed by " + p.actor()
		}
		if out, err = e.settle(ctx, tx, ev, j, outcome, msg, j.PlatformIndex, now); err != nil {
			return err
		}
		out.ResolvedAt, out.ResolvedBy, out.Note = now, p.actor(), note
		if err := tx.ResolveJob(ctx, id, now, out.ResolvedBy, note); err != nil {
			return err
		}
		return tx.CreateAudit(ctx, &AuditEntry{AccountID: j.AccountID, Actor: p.actor(), ActorUserID: p.UserID, ActorKeyID: p.KeyID,
			Action: "job.resolve", Object: "job " + id + ": " + string(outcome), Address: truncate(p.Address, 64), At: now})
	})
	if err != nil {
		if ReasonOf(err) == ReasonStateChanged {
			return Job{}, Errorf(Conflict, "job_not_uncertain", "job %s changed state meanwhile: query it again", id)
		}
		return Job{}, err
	}
	e.notify(ctx, id)
	return out, nil
}

// JobFilter selects jobs for List: an account's (a member's own; 0 for
// every account, for an operator), newest first, at most Limit, after
// Cursor, narrowed by the fields that are set.
type JobFilter struct {
	AccountID      int64
	State          State
	BotID          int64
	TargetID       int64
	Since, Until   time.Time // created at or after Since, before Until
	IdempotencyKey string
	Limit          int
	Cursor         string
}

// List lists jobs, newest first. Pages stay stable while jobs are made:
// a new job comes before the first page, never inside the pages after it.
func (s *JobService) List(ctx context.Context, p Principal, f JobFilter) (Page[Job], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[Job]{}, err
	}
	if f.AccountID, err = p.listAccount(f.AccountID); err != nil {
		return Page[Job]{}, err
	}
	if f.State != "" && !f.State.Valid() {
		return Page[Job]{}, Errorf(Invalid, "invalid_state", "state %q is not a job state: use one of %s", truncate(string(f.State), 40), statesList())
	}
	if f.IdempotencyKey != "" {
		if err := ValidateIdempotencyKey(f.IdempotencyKey); err != nil {
			return Page[Job]{}, err
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return Page[Job]{}, Errorf(Invalid, "invalid_range", "the time range ends before it starts: give since before until")
	}
	f.Limit = limit + 1
	js, err := s.e.store.ListJobs(ctx, f)
	if err != nil {
		return Page[Job]{}, err
	}
	return pageOf(js, limit, func(j Job) int64 { return j.MessageID }), nil
}

// JobCountFilter selects the jobs Count counts: one account's (a
// member's own; an operator names one) made at or after Since (zero: ever).
type JobCountFilter struct {
	AccountID int64
	Since     time.Time
}

// Count returns how many of an account's jobs made since a time are in
// each state now (states without jobs are absent). Unlike a page of List,
// it is exact however many jobs there are: the store counts them from an
// index of jobs by account and creation time.
func (s *JobService) Count(ctx context.Context, p Principal, f JobCountFilter) (map[State]int, error) {
	id, err := p.listAccount(f.AccountID)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, Errorf(Invalid, "account_required", "jobs are counted per account: name the account")
	}
	return s.e.store.CountJobs(ctx, id, f.Since)
}

func statesList() string {
	s := make([]string, 0, 7)
	for _, st := range States() {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}

// cancelQueued cancels inside tx the queued jobs of a bot (targetID 0) or
// of a target, returning their points, and returns their ids.
func (e *Engine) cancelQueued(ctx context.Context, tx Tx, ev *txEvents, botID, targetID int64, note string, now time.Time) ([]string, error) {
	ids, err := tx.QueuedJobs(ctx, botID, targetID)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		j, err := tx.Job(ctx, id)
		if err != nil {
			return nil, err
		}
		if j.State != StateQueued {
			continue
		}
		msg := note
		if j.Cost > 0 {
			msg += "; points returned"
		}
		if _, err := e.settle(ctx, tx, ev, j, StateCanceled, msg, "", now); err != nil {
			return nil, err
		}
	}
	return ids, nil
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
