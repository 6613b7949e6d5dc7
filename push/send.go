package push

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// SendRequest is one message to one target (the single-send endpoints).
type SendRequest struct {
	BotID int64
	// TargetID is the bound target; 0 for platforms without targets.
	TargetID int64
	// TargetType, when set, must be the bound target's type.
	TargetType TargetType
	Message    Message
	// IdempotencyKey, when set, makes the request safe to resubmit.
	IdempotencyKey string
}

// BatchRequest is one message to several targets of one bot.
type BatchRequest struct {
	BotID          int64
	TargetIDs      []int64
	Message        Message
	IdempotencyKey string
}

// Group is one bot's share of a MultiRequest.
type Group struct {
	BotID     int64
	TargetIDs []int64
}

// MultiRequest is one message to targets of several bots.
type MultiRequest struct {
	Groups         []Group
	Message        Message
	IdempotencyKey string
}

// Result is what a send request produced: its jobs, in the order of the
// request's targets, as they stood when the synchronous wait ended.
type Result struct {
	Jobs []Job
	// Replayed is true when the request repeated an earlier one with the
	// same idempotency key: nothing new was queued or charged.
	Replayed bool
}

// Pending reports whether any job is still queued or running.
func (r Result) Pending() bool {
	for _, j := range r.Jobs {
		if j.State.Pending() {
			return true
		}
	}
	return false
}

// Send submits one message to one target and waits up to the synchronous
// wait (Limits.SyncWait, or until ctx ends) for it to be sent.
//
// The sends are made in the principal's account, whose bots they must
// name; an operator's (such as System's) are made in the account of the
// bots named, which must be one account. Idempotency keys are the
// account's.
func (e *Engine) Send(ctx context.Context, p Principal, r SendRequest) (Result, error) {
	if r.TargetID < 0 {
		// Any target is wrong for a bot without targets: say so rather
		// than that the id is malformed.
		if err := e.RefuseTargets(ctx, p, r.BotID, RequestKindSingle); err != nil {
			return Result{}, err
		}
	}
	return e.submit(ctx, p, submission{
		kind:       RequestKindSingle,
		dests:      []destination{{BotID: r.BotID, TargetID: r.TargetID}},
		targetType: r.TargetType,
		msg:        r.Message,
		key:        r.IdempotencyKey,
	})
}

// SendBatch submits one message to up to Limits.MaxTargets targets of one
// bot and waits up to the synchronous wait in total.
func (e *Engine) SendBatch(ctx context.Context, p Principal, r BatchRequest) (Result, error) {
	if err := e.RefuseTargets(ctx, p, r.BotID, RequestKindBatch); err != nil {
		return Result{}, err
	}
	if len(r.TargetIDs) == 0 {
		return Result{}, fieldErrorf(FieldTargets, "missing_targets", "the target list is empty: give at least one target id")
	}
	dests := make([]destination, len(r.TargetIDs))
	for i, t := range r.TargetIDs {
		dests[i] = destination{BotID: r.BotID, TargetID: t}
	}
	return e.submit(ctx, p, submission{kind: RequestKindBatch, dests: dests, msg: r.Message, key: r.IdempotencyKey})
}

// SendMulti submits one message to targets of several bots, at most
// Limits.MaxTargets in all, and waits up to the synchronous wait in total.
func (e *Engine) SendMulti(ctx context.Context, p Principal, r MultiRequest) (Result, error) {
	if len(r.Groups) == 0 {
		return Result{}, fieldErrorf(FieldGroups, "missing_bots", "no bot groups were given: give at least one bot with its targets")
	}
	var dests []destination
	for i, g := range r.Groups {
		if err := e.RefuseTargets(ctx, p, g.BotID, RequestKindMulti); err != nil {
			return Result{}, err
		}
		if len(g.TargetIDs) == 0 {
			return Result{}, fieldErrorf(FieldTargets, "missing_targets", "group %d (bot %d) has an empty target list: give at least one target id", i, g.BotID)
		}
		for _, t := range g.TargetIDs {
			dests = append(dests, destination{BotID: g.BotID, TargetID: t})
		}
	}
	return e.submit(ctx, p, submission{kind: RequestKindMulti, dests: dests, msg: r.Message, key: r.IdempotencyKey})
}

type submission struct {
	// replies are the jobs (by index) to targets of platforms that take
	// replies only, with the platform's rule: each claims a reply when it
	// is committed.
	replies map[int]ReplyRule
	// sends are the planned jobs (by index) with their bots and targets,
	// as plan resolved them: what sending each needs (see claimNow).
	sends      []started
	kind       RequestKind
	accountID  int64
	operator   bool // the account is the bots' (an operator sends)
	dests      []destination
	targetType TargetType
	msg        Message // as given
	key        string
}

// validate checks everything that needs no store: the key, the message and
// the shape of the destination list.
func (e *Engine) validate(s *submission) error {
	if s.key != "" {
		if err := ValidateIdempotencyKey(s.key); err != nil {
			return err
		}
	}
	if s.targetType != "" && !s.targetType.Valid() {
		v := truncate(string(s.targetType), 40)
		return fieldErrorf(FieldTargetType, "invalid_target_type", "target type %q is not supported: use \"user\" or \"group\", or leave it out", v).with(v, 0)
	}
	if len(s.dests) > e.limits.MaxTargets {
		return fieldErrorf(FieldTargets, "too_many_targets", "the request's target list has %d targets; the limit is %d: split it into several requests", len(s.dests), e.limits.MaxTargets).with(strconv.Itoa(len(s.dests)), int64(e.limits.MaxTargets))
	}
	if err := s.msg.normalize().validate(e.limits); err != nil {
		return err
	}
	seen := make(map[destination]bool, len(s.dests))
	for _, d := range s.dests {
		if d.BotID <= 0 {
			return fieldErrorf(FieldBot, "invalid_bot_id", "bot id %d is not valid: give the positive id of one of your bots", d.BotID).with(strconv.FormatInt(d.BotID, 10), 0)
		}
		if d.TargetID < 0 {
			return fieldErrorf(FieldTarget, "invalid_target_id", "target id %d is not valid: give the positive id of a bound target", d.TargetID).with(strconv.FormatInt(d.TargetID, 10), 0)
		}
		if seen[d] && d.TargetID != 0 {
			return fieldErrorf(FieldTargets, "duplicate_target", "target %d of bot %d appears more than once: list each target once", d.TargetID, d.BotID).with(strconv.FormatInt(d.TargetID, 10), 0)
		}
		seen[d] = true
	}
	return nil
}

func (e *Engine) submit(ctx context.Context, p Principal, s submission) (Result, error) {
	if e.draining.Load() {
		return Result{}, &Error{Kind: Unavailable, Reason: "draining", RetryAfter: 5 * time.Second,
			Message: "the service is restarting: resubmit later with the same idempotency key and the same message"}
	}
	if err := e.validate(&s); err != nil {
		return Result{}, err
	}
	if err := e.account(ctx, p, &s); err != nil {
		return Result{}, err
	}
	fp := s.fingerprint()
	if s.key != "" {
		// A resubmission whose jobs are all final is answered from memory.
		if rec, jobs, ok := e.replays.get(s.accountID, s.key, e.clock.Now(), e.limits.IdempotencyTTL); ok {
			if err := e.replayable(rec, &s, fp, jobs); err != nil {
				return Result{}, err
			}
			e.obs.Replay(s.kind)
			return Result{Jobs: jobs, Replayed: true}, nil
		}
	}
	// A request with a key is not looked up before it is written: a new
	// key (by far the most requests) then costs no read, and a key already
	// taken is found by the write itself, whose first statement inserts the
	// key's record and is refused by its unique index before anything else
	// is written. The request then replays the record.
	jobs, err := e.plan(ctx, &s)
	if err != nil {
		if s.key != "" {
			// A resubmission replays even when its bot, target or the
			// platform's rules changed since.
			if res, ok, rerr := e.replayStored(ctx, &s, fp); ok || rerr != nil {
				return res, rerr
			}
		}
		return Result{}, err
	}
	claimed := e.claimNow(ctx, &s)
	// Claims that do not run are given back: on a refusal, and on a panic
	// (which the HTTP server recovers) before they run.
	defer claimed.drop(ctx, e)
	for attempt := 0; ; attempt++ {
		err = e.commit(ctx, &s, fp, jobs)
		if err == nil || s.key == "" || ReasonOf(err) != ReasonDuplicate || attempt > 0 {
			break
		}
		if res, ok, rerr := e.replayStored(ctx, &s, fp); ok || rerr != nil {
			return res, rerr
		}
		// The record is gone again (swept): commit anew.
	}
	if err != nil {
		if IsKind(err, Unavailable) && s.key != "" {
			// The commit may have happened all the same. With a key, a
			// resubmission is answered with the request's jobs, so they
			// may go out; without one, a resubmission makes new jobs,
			// and these are left unsent (made uncertain once stale).
			claimed.unsure(e)
		}
		return Result{}, err
	}
	var charged int64
	for _, j := range jobs {
		charged += j.Cost
	}
	if charged > 0 {
		e.obs.PointsCharged(charged)
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
		e.jobBots.note(j.ID, j.BotID)
	}
	notices, stop := e.subscribe(ids, claimed.planned(jobs))
	defer stop()
	claimed.run(e)
	// The synchronous wait starts now and the enqueue takes from it: a
	// queue that cannot be reached (Redis down, its client dialling again
	// and again) cannot make the answer later than the wait.
	until := time.Now().Add(e.limits.SyncWait)
	if queued := claimed.queued(ids); len(queued) > 0 {
		e.enqueue(ctx, queued, until)
	}
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		out[i] = *j
	}
	out, err = e.await(ctx, notices, out, until)
	return Result{Jobs: out}, err
}

// enqueueTimeout bounds the enqueue of a send's jobs made again after
// the send was answered, when the queue was too slow for its wait.
const enqueueTimeout = 30 * time.Second

// enqueue hands the committed jobs to the queue, waiting for it until
// until at most. An enqueue the wait cut off is made again without the
// caller (bounded by enqueueTimeout, not by the request), so that a slow
// queue delays the jobs rather than leaving them to the reconciler; the
// queue takes an id it already holds once. One that fails leaves the jobs
// queued in the store, where recovery or the reconciler enqueues them.
func (e *Engine) enqueue(ctx context.Context, ids []string, until time.Time) {
	ectx, cancel := context.WithDeadline(ctx, until)
	err := e.queue.Enqueue(ectx, ids...)
	cancel()
	if err != nil && ectx.Err() != nil && ctx.Err() == nil {
		go func() {
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), enqueueTimeout)
			defer cancel()
			e.enqueueFailed(ids, e.queue.Enqueue(bctx, ids...))
		}()
		return
	}
	e.enqueueFailed(ids, err)
}

// enqueueFailed logs an enqueue that failed (err not nil).
func (e *Engine) enqueueFailed(ids []string, err error) {
	if err != nil {
		e.log.Warn("enqueue failed; jobs stay queued for recovery", "jobs", len(ids), "err", err)
	}
}

// account decides the account the request is made in: a member's own, or
// for an operator the account of the first bot (plan checks that every bot
// is of it).
func (e *Engine) account(ctx context.Context, p Principal, s *submission) error {
	if !p.Operator() {
		if p.AccountID <= 0 {
			return Errorf(Forbidden, "no_account", "the principal acts for no account: sends are made in an account")
		}
		s.accountID = p.AccountID
		return nil
	}
	b, err := e.catalog.bot(ctx, e.store, s.dests[0].BotID)
	if IsKind(err, NotFound) {
		return botNotFound(s.dests[0].BotID)
	}
	if err != nil {
		return err
	}
	s.accountID, s.operator = b.AccountID, true
	return nil
}

// subscribe asks for the completion notices of the jobs and for their
// settled rows from this process's workers, and offers the workers the
// jobs as created (planned, when this request created them).
func (e *Engine) subscribe(ids []string, planned []*Job) (<-chan string, func()) {
	e.handoff.want(ids, planned)
	notices, stop := e.notifier.Subscribe(ids)
	return notices, func() {
		stop()
		e.handoff.done(ids)
	}
}

// plan resolves the request's bots and targets (which never change once
// created) and builds its jobs, before any write.
func (e *Engine) plan(ctx context.Context, s *submission) ([]*Job, error) {
	msg := s.msg.normalize()
	now := e.clock.Now()
	bots := make(map[int64]Bot)
	jobs := make([]*Job, 0, len(s.dests))
	for _, d := range s.dests {
		bot, ok := bots[d.BotID]
		if !ok {
			b, err := e.catalog.bot(ctx, e.store, d.BotID)
			if err != nil && !IsKind(err, NotFound) {
				return nil, err
			}
			if err != nil {
				return nil, botNotFound(d.BotID)
			}
			if b.AccountID != s.accountID {
				if s.operator {
					return nil, fieldErrorf(FieldBot, "bots_of_several_accounts", "bot %d is of another account than bot %d: send from one account at a time", b.ID, s.dests[0].BotID)
				}
				return nil, botNotFound(d.BotID)
			}
			bot, bots[d.BotID] = b, b
		}
		var t Target
		p, ok := e.platforms[bot.Platform]
		if !ok {
			return nil, Errorf(Invalid, "platform_unavailable", "bot %d uses the platform %q, which this server does not run", bot.ID, bot.Platform)
		}
		info := p.Info()
		var tt TargetType
		if !info.Targets {
			if s.kind != RequestKindSingle || d.TargetID != 0 {
				return nil, targetlessRefusal(s.kind, bot)
			}
		} else {
			if d.TargetID == 0 {
				return nil, fieldErrorf(FieldTarget, "missing_target", "bot %d is on %s and needs a target: give the id of a target bound to the bot", bot.ID, bot.Platform)
			}
			var err error
			t, err = e.catalog.target(ctx, e.store, d.TargetID)
			if err != nil && !IsKind(err, NotFound) {
				return nil, err
			}
			if err != nil || t.BotID != bot.ID {
				nf := Errorf(NotFound, "target_not_found", "target %d is not bound to bot %d: bind it first, or check the target id", d.TargetID, bot.ID)
				nf.Field = FieldTarget
				return nil, nf
			}
			tt = t.Type
			if s.targetType != "" && s.targetType != t.Type {
				return nil, fieldErrorf(FieldTargetType, "target_type_mismatch", "target %d is bound as a %s; the target type %q does not match: leave the target type out or give %q", t.ID, t.Type, s.targetType, t.Type).with(string(s.targetType), 0)
			}
			if t.Presence == PresenceGone {
				return nil, targetGone(t)
			}
			// A wake-up message is no reply: the platform judges it by its
			// own rules (QQ: one per window after the user's last message).
			if rr, ok := p.(ReplyRules); ok && !msg.Wakeup {
				if s.replies == nil {
					s.replies = make(map[int]ReplyRule)
				}
				s.replies[len(jobs)] = rr.ReplyRules(t.Type)
			}
		}
		if err := validateMessageFor(p, bot, msg, tt); err != nil {
			return nil, err
		}
		var cost int64
		if e.points.Enabled {
			cost = e.points.CostPerJob
		}
		j := &Job{
			ID:             NewJobID(),
			AccountID:      s.accountID,
			BotID:          bot.ID,
			TargetID:       d.TargetID,
			Platform:       bot.Platform,
			TargetType:     tt,
			Message:        msg,
			State:          StateQueued,
			Cost:           cost,
			IdempotencyKey: s.key,
			CreatedAt:      now,
			UpdatedAt:      now,
			ExpiresAt:      now.Add(e.limits.QueueWait),
		}
		jobs = append(jobs, j)
		s.sends = append(s.sends, started{job: j, bot: bot, target: t})
	}
	return jobs, nil
}

// validateMessageFor asks the platform whether it can send msg for bot:
// first by its general limits, then by the bot's configuration when the
// platform's limits depend on it.
func validateMessageFor(p Platform, bot Bot, msg Message, tt TargetType) error {
	err := p.ValidateMessage(msg, tt)
	if bv, ok := p.(BotMessageValidator); ok && err == nil {
		err = bv.ValidateBotMessage(bot.Config, msg, tt)
	}
	if err == nil || IsKind(err, Invalid) {
		return err
	}
	return Errorf(Invalid, "unsupported_message", "%s cannot send this message: %v", bot.Platform, err)
}

// targetlessRefusal is the answer to a request that names targets for a
// bot on a platform without targets: a single send names none, and the
// batch sends cannot address such a bot at all.
func targetlessRefusal(kind RequestKind, bot Bot) error {
	if kind != RequestKindSingle {
		return fieldErrorf(FieldTargets, "use_single_send", "bot %d is on %s, which has no targets: send to it with a single send without a target", bot.ID, bot.Platform)
	}
	return fieldErrorf(FieldTarget, "platform_has_no_targets", "bot %d is on %s, which has no targets: leave the target out", bot.ID, bot.Platform)
}

// RefuseTargets returns the refusal that a request of the given kind naming
// targets for botID gets when botID is one of the account's bots and its
// platform has no targets, and nil otherwise (also when there is no such
// bot: the send itself then answers 404). Front ends call it before they
// refuse a target they cannot read, or a missing target list, so that the
// caller learns that the platform takes no targets at all.
func (e *Engine) RefuseTargets(ctx context.Context, p Principal, botID int64, kind RequestKind) error {
	b, err := e.catalog.bot(ctx, e.store, botID)
	if err != nil || !p.sees(b.AccountID) {
		return nil
	}
	pl, ok := e.platforms[b.Platform]
	if !ok || pl.Info().Targets {
		return nil
	}
	return targetlessRefusal(kind, b)
}

// commit writes the request in one transaction: the idempotency record
// (first: a key already taken refuses the request with Conflict
// ReasonDuplicate before anything else is done), the jobs, then the points
// charge and the backlog reservation. The last two update rows that every
// request of the account or of the service updates: on a database that
// runs transactions concurrently, they are locked from there to the
// commit, so they come last.
func (e *Engine) commit(ctx context.Context, s *submission, fp requestPrint, jobs []*Job) error {
	var rec *IdempotencyRecord
	if s.key != "" {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		rec = &IdempotencyRecord{AccountID: s.accountID, Key: s.key, Kind: s.kind, Fingerprint: fp.canonical, JobIDs: ids, CreatedAt: jobs[0].CreatedAt}
	}
	perBot := make(map[int64]int, 1)
	for _, j := range jobs {
		perBot[j.BotID]++
	}
	var entries []LedgerEntry
	if e.points.Enabled {
		entries = make([]LedgerEntry, len(jobs))
		for i, j := range jobs {
			entries[i] = LedgerEntry{AccountID: s.accountID, JobID: j.ID, Kind: LedgerCharge, Amount: -j.Cost, At: j.CreatedAt}
		}
	}
	return e.store.Update(ctx, func(ctx context.Context, tx Tx) error {
		if err := createRequest(ctx, tx, rec, jobs); err != nil {
			return err
		}
		for i, rule := range s.replies {
			if err := e.claimReply(ctx, tx, jobs[i], rule); err != nil {
				return err
			}
		}
		if entries != nil {
			if err := tx.Charge(ctx, s.accountID, entries); err != nil {
				return err
			}
		}
		return tx.ReserveBacklog(ctx, perBot, e.limits.BacklogPerBot, e.limits.BacklogTotal)
	})
}

// createRequest writes a request's idempotency record (when it has one)
// and its jobs, together where tx can (RequestCreator).
func createRequest(ctx context.Context, tx Tx, rec *IdempotencyRecord, jobs []*Job) error {
	if rc, ok := tx.(RequestCreator); ok {
		return rc.CreateRequest(ctx, rec, jobs)
	}
	if rec != nil {
		if err := tx.CreateIdempotency(ctx, rec); err != nil {
			return err
		}
	}
	return tx.CreateJobs(ctx, jobs)
}

// replayStored replays the request's key from its stored record; ok is
// false when there is no record.
func (e *Engine) replayStored(ctx context.Context, s *submission, fp requestPrint) (res Result, ok bool, err error) {
	rec, err := e.store.Idempotency(ctx, s.accountID, s.key)
	switch {
	case err == nil:
		res, err = e.replay(ctx, rec, s, fp)
		return res, true, err
	case IsKind(err, NotFound):
		return Result{}, false, nil
	default:
		return Result{}, false, err
	}
}

// replay answers a resubmission: the same request gets the original jobs'
// current result; another request under the same key is a Conflict.
func (e *Engine) replay(ctx context.Context, rec IdempotencyRecord, s *submission, fp requestPrint) (Result, error) {
	if err := e.replayable(rec, s, fp, nil); err != nil {
		return Result{}, err
	}
	notices, stop := e.subscribe(rec.JobIDs, nil)
	defer stop()
	jobs, err := e.store.Jobs(ctx, rec.JobIDs)
	if err != nil {
		return Result{}, err
	}
	if err := e.replayable(rec, s, fp, jobs); err != nil {
		return Result{}, err
	}
	e.obs.Replay(s.kind)
	jobs, err = e.await(ctx, notices, jobs, time.Now().Add(e.limits.SyncWait))
	if err == nil {
		e.replays.put(rec, jobs)
	}
	return Result{Jobs: jobs, Replayed: true}, err
}

// replayable refuses a request that reuses a key for another request: a
// record of another kind or fingerprint, or (given the record's jobs) a
// target type other than the one the jobs were sent as.
func (e *Engine) replayable(rec IdempotencyRecord, s *submission, fp requestPrint, jobs []Job) error {
	kind := s.kind
	same := rec.Kind == kind && fp.matches(rec.Fingerprint)
	if same && s.targetType != "" {
		for _, j := range jobs {
			if j.TargetType != "" && j.TargetType != s.targetType {
				same = false
			}
		}
	}
	if !same {
		what := "a different message or target list"
		if rec.Kind != kind {
			what = fmt.Sprintf("a %s send", rec.Kind)
		}
		e := Errorf(Conflict, "idempotency_conflict", "the idempotency key %q was already used for %s: one key maps to one message; use a new key for a new message", rec.Key, what)
		e.Field, e.Value = FieldIdempotencyKey, rec.Key
		return e
	}
	return nil
}

// await waits until every job is settled, the synchronous wait ends (at
// until) or ctx ends, re-reading a job from the store when it is notified
// (and all pending ones every poll interval, in case a notice was lost).
func (e *Engine) await(ctx context.Context, notices <-chan string, jobs []Job, until time.Time) ([]Job, error) {
	pending := make(map[string]int)
	for i, j := range jobs {
		if !j.State.Settled() {
			pending[j.ID] = i
		}
	}
	if len(pending) == 0 {
		return jobs, nil
	}
	deadline := time.NewTimer(time.Until(until))
	defer deadline.Stop()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	refresh := func(id string) error {
		i := pending[id]
		j, ok := e.handoff.take(id)
		if ok {
			// Handed over by this process's worker or carried by another
			// process's notice, which leaves the message out: it never
			// changes, and the waiter has it.
			j.Message = jobs[i].Message
		} else {
			var err error
			if j, err = e.store.Job(ctx, id); err != nil {
				return err
			}
		}
		jobs[i] = j
		if j.State.Settled() {
			delete(pending, id)
		}
		return nil
	}
	for len(pending) > 0 {
		select {
		case id := <-notices:
			if _, ok := pending[id]; ok {
				if err := refresh(id); err != nil {
					return jobs, e.waitErr(ctx, err)
				}
			}
		case <-poll.C:
			for id := range pending {
				if err := refresh(id); err != nil {
					return jobs, e.waitErr(ctx, err)
				}
			}
		case <-deadline.C:
			return jobs, nil
		case <-e.halted:
			return jobs, nil
		case <-ctx.Done():
			return jobs, nil
		}
	}
	return jobs, nil
}

// waitErr turns a store error during the wait into no error when the
// caller went away: the jobs are committed and the answer is the last read.
func (e *Engine) waitErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	e.log.Warn("reading jobs during the synchronous wait failed", "err", err)
	return nil
}

// targetGone is the refusal of a send to a target whose chat left.
func targetGone(t Target) error {
	why := t.PresenceNote
	if why == "" {
		why = "left the bot"
	}
	e := Errorf(Invalid, "target_gone", "target %d is gone: the chat %s at %s; it comes back when it writes to the bot, follows or adds it again",
		t.ID, why, t.PresenceAt.UTC().Format(time.RFC3339))
	e.Field = FieldTarget
	return e
}

// claimReply claims, inside the request's transaction, the reply a job to
// a platform that takes replies only is sent as: the next reply to the
// target's latest message, or to its latest event, within the platform's
// windows. Without one the whole request is refused, charged nothing.
func (e *Engine) claimReply(ctx context.Context, tx Tx, j *Job, rule ReplyRule) error {
	reply, state, err := tx.ClaimReply(ctx, j.TargetID, j.CreatedAt, rule)
	if err != nil {
		return err
	}
	if reply.MessageID == "" && reply.EventID == "" {
		return noReplyWindow(j, state, rule, j.CreatedAt)
	}
	return tx.SetJobReply(ctx, j.ID, reply)
}

// noReplyWindow says why a target of a platform that takes replies only
// cannot be sent to now, and what to do.
func noReplyWindow(j *Job, st ReplyState, rule ReplyRule, now time.Time) error {
	last := "has never written to the bot"
	switch {
	case !st.MessageAt.IsZero() && st.MessageSeq >= rule.PerMessage && now.Sub(st.MessageAt) < rule.MessageWindow:
		last = fmt.Sprintf("was sent all the %d replies its last message (at %s) allows", rule.PerMessage, st.MessageAt.UTC().Format(time.RFC3339))
	case !st.MessageAt.IsZero():
		last = fmt.Sprintf("last wrote at %s, %s ago", st.MessageAt.UTC().Format(time.RFC3339), now.Sub(st.MessageAt).Round(time.Minute))
	}
	e := Errorf(Invalid, "no_reply_window", "target %d %s; %s takes messages only as replies, within %s of a message: ask the user to write to the bot, then send again",
		j.TargetID, last, j.Platform, rule.MessageWindow)
	e.Field = FieldTarget
	return e
}
