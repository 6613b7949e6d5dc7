package push

import (
	"context"
	"time"
)

// Jobs claimed as they are created. A worker sends a job only after a
// commit that made it running: the claim. A job that waits for nothing
// (a worker of this process is free, its bot has a send slot, its
// platform a pacing slot) is claimed in the transaction that creates it,
// and sent by this process right after that commit, so that its send
// waits for two commits (its request's and its outcome's) instead of
// three. The guarantee is the claim's: a crash after the commit leaves
// the job running, and whoever finds it so (the queue's handover of a
// dead process's jobs, the recovery of stale jobs) makes it uncertain,
// as after a crash during any send. Only a queue that runs jobs in this
// process (LocalRunner) takes part.

// claims are the jobs a request creates running, with what sending each
// needs, for this process to send once the request commits. Until they
// run they hold a worker slot, a slot of their bot and their platform's
// pacing slot each; drop gives them back.
type claims struct {
	runner LocalRunner
	jobs   map[string]started // each holding one worker slot
	done   bool               // run or dropped: nothing left to give back
}

// claimNow picks the planned jobs of a request that this process can
// send as soon as the request commits, takes a worker slot, a slot of the
// bot and the platform's pacing slot for each, and marks them running. It
// returns nil when there are none. A job of a platform that takes replies
// only is left queued: its claim reads the reply it is sent as. Should a
// platform's pacing panic, what was taken is given back first.
func (e *Engine) claimNow(ctx context.Context, s *submission) *claims {
	lr, ok := e.queue.(LocalRunner)
	if !ok {
		return nil
	}
	n := lr.TakeSlots(len(s.sends))
	if n == 0 {
		return nil
	}
	c := &claims{runner: lr, jobs: make(map[string]started, n)}
	picked := false
	defer func() {
		if !picked {
			lr.DropSlots(n - len(c.jobs))
			c.drop(ctx, e)
		}
	}()
	for i, st := range s.sends {
		if len(c.jobs) == n {
			break
		}
		if _, reply := s.replies[i]; reply || !e.claimable(ctx, st) {
			continue
		}
		j := st.job
		j.State, j.StartedAt, j.Attempts = StateRunning, j.CreatedAt, 1
		c.jobs[j.ID] = st
	}
	picked = true
	if left := n - len(c.jobs); left > 0 {
		lr.DropSlots(left)
	}
	if len(c.jobs) == 0 {
		return nil
	}
	return c
}

// claimable takes the bot's send slot and the platform's pacing slot for
// a job about to be created; false when it must wait in the queue
// instead, with neither taken.
func (e *Engine) claimable(ctx context.Context, st started) (ok bool) {
	j := st.job
	if !e.acquireSlot(ctx, j.BotID, j.ID) {
		return false
	}
	defer func() {
		if !ok {
			e.releaseSlot(context.WithoutCancel(ctx), j.BotID, j.ID)
		}
	}()
	return e.pace(*j, st.bot, st.target) == 0
}

// drop gives back the slots of claims that will not run: their request
// was refused, or it ended in a panic before they ran. It does nothing
// after run or a drop before.
func (c *claims) drop(ctx context.Context, e *Engine) {
	if c == nil || c.done {
		return
	}
	c.done = true
	for _, st := range c.jobs {
		giveBack(ctx, e, st)
	}
	c.runner.DropSlots(len(c.jobs))
}

// giveBack gives back the pacing and bot slots of a claimed job that
// will not run.
func giveBack(ctx context.Context, e *Engine, st started) {
	e.unpace(*st.job, st.bot, st.target)
	e.releaseSlot(context.WithoutCancel(ctx), st.job.BotID, st.job.ID)
}

// planned returns jobs with nil in place of the claimed ones, for the
// handoff: a worker that is handed a claimed job's id (a retry after a
// wait) must read it, as it is no longer as created.
func (c *claims) planned(jobs []*Job) []*Job {
	if c == nil {
		return jobs
	}
	out := make([]*Job, len(jobs))
	for i, j := range jobs {
		if _, claimed := c.jobs[j.ID]; !claimed {
			out[i] = j
		}
	}
	return out
}

// queued returns the ids of the jobs that were not claimed.
func (c *claims) queued(ids []string) []string {
	if c == nil {
		return ids
	}
	out := make([]string, 0, len(ids)-len(c.jobs))
	for _, id := range ids {
		if _, claimed := c.jobs[id]; !claimed {
			out = append(out, id)
		}
	}
	return out
}

// settleFor bounds how long claims whose request's commit is unknown wait
// for the store to tell whether it happened.
const settleFor = 30 * time.Second

// unsure takes over the claims of a request with an Idempotency-Key whose
// commit failed as the database became unavailable. Such a commit may
// have happened though the store could not say so (the COMMIT's answer
// was lost): its jobs are then
// running, claimed by this process, which alone sends them, and nothing
// else would. Once the store answers, the jobs it holds are sent and the
// slots of the others given back. If it does not answer within settleFor,
// or the engine drains first, all are given back, and jobs that exist are
// left to the recovery of stale jobs, which makes them uncertain.
func (c *claims) unsure(e *Engine) {
	if c == nil || c.done {
		return
	}
	c.done = true
	go (&claims{runner: c.runner, jobs: c.jobs}).settle(e)
}

// settle finds out which of the claimed jobs exist, then sends them.
func (c *claims) settle(e *Engine) {
	ctx, cancel := context.WithTimeout(context.Background(), settleFor)
	defer cancel()
	ids := make([]string, 0, len(c.jobs))
	for id := range c.jobs {
		ids = append(ids, id)
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		// The request's jobs were written in one transaction: all of
		// them exist, or none (NotFound).
		jobs, err := e.store.Jobs(ctx, ids)
		if err == nil || IsKind(err, NotFound) {
			c.keep(ctx, e, jobs)
			c.run(e)
			return
		}
		select {
		case <-ctx.Done():
			c.drop(ctx, e)
			return
		case <-time.After(wait):
		}
		if e.Draining() {
			c.drop(ctx, e)
			return
		}
	}
}

// keep gives back the slots of the claimed jobs that are not among the
// running jobs found, and takes the rows of those that are.
func (c *claims) keep(ctx context.Context, e *Engine, found []Job) {
	running := make(map[string]Job, len(found))
	for _, j := range found {
		if j.State == StateRunning {
			running[j.ID] = j
		}
	}
	for id, st := range c.jobs {
		j, ok := running[id]
		if ok {
			st.job = &j
			c.jobs[id] = st
			continue
		}
		giveBack(ctx, e, st)
		delete(c.jobs, id)
		c.runner.DropSlots(1)
	}
}

// run hands the committed claims to the queue, which sends each in this
// process at once.
func (c *claims) run(e *Engine) {
	if c == nil || c.done {
		return
	}
	c.done = true
	if len(c.jobs) == 0 {
		return
	}
	ids := make([]string, 0, len(c.jobs))
	for id := range c.jobs {
		ids = append(ids, id)
	}
	c.runner.RunNow(ids, func(ctx context.Context, id string) error {
		st := c.jobs[id]
		j := *st.job // as committed: the insert set its MessageID
		st.job = &j
		return e.send(ctx, st)
	})
}
