package queue

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Local runs. A node that works jobs runs the ids it enqueues itself, at
// once, while it has free worker slots, instead of leaving them in Redis
// until one of its workers (or another node's) polls for them: asynq has
// no blocking pop, so that wait (up to the poll interval, after any moment
// the queue ran empty) was most of a lone send's time.
//
// A local run keeps the guarantees of a task. Its ids are reserved as a
// batch's are (so no id is ever in two tasks, or in a task and a local
// run), and a safety task holding them is written, scheduled a lease
// ahead (RedisOptions.LocalLease), before any of them runs. While the run
// lasts, the node moves the safety task's due time on; when the run ends,
// it deletes the task and the reservations in one step. Should the node
// die (or lose Redis) meanwhile, the safety task falls due on any node
// and hands each id back as a task of its own, as a batch delivered again
// does: the engine then sends a job still queued, and makes one it finds
// running uncertain.
const (
	// localType is the asynq task type of a local run's safety task.
	localType = "herald:local"
	// localPrefix begins the TaskID of a safety task.
	localPrefix = "local-"
)

// finishLocalScript ends a local run: it deletes the safety task unless it
// fell due meanwhile (then it is the queue's: a worker may hold it) and
// releases the run's reservations. KEYS[1] is asynq's scheduled set,
// KEYS[2] the safety task's key, KEYS[3] the reservations hash; ARGV[1]
// is the safety task's id, ARGV[2..] the job ids.
var finishLocalScript = redis.NewScript(`
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('DEL', KEYS[2])
end
redis.call('HDEL', KEYS[3], unpack(ARGV, 2))
return 1
`)

// extendLocalScript moves a safety task's due time (KEYS[1] is asynq's
// scheduled set, ARGV[1] the new due time in Unix seconds, ARGV[2] the
// task's id) and returns 1, or 0 when the task is no longer scheduled.
var extendLocalScript = redis.NewScript(`
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
return 1
`)

// errReserved says that an id of a local run is reserved or has a task
// already: the ids go to Redis as usual instead.
var errReserved = errors.New("queue: an id is reserved or enqueued already")

// scheduledKey is asynq's sorted set of the namespace's scheduled tasks.
func (q *Redis) scheduledKey() string { return "asynq:{" + q.opts.Namespace + "}:scheduled" }

// TakeSlots implements push.LocalRunner, and takes the slots of a local
// run of ids enqueued here. Each slot taken counts as a running handler
// (Stop waits for it) until DropSlots gives it back or its run ends. A
// node that is stopping, or works no jobs, takes none.
func (q *Redis) TakeSlots(n int) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.srv == nil || q.opts.LocalLease < 0 {
		return 0
	}
	took := q.freeSlots(n)
	for range took {
		q.busy.add()
	}
	return took
}

// DropSlots implements push.LocalRunner.
func (q *Redis) DropSlots(n int) {
	for range n {
		<-q.slots
		q.busy.done()
	}
}

// RunNow implements push.LocalRunner: the ids run as soon as the write
// loop takes them, with those of the calls that come meanwhile, and their
// safety task is written while they run.
func (q *Redis) RunNow(ids []string, h push.Handler) {
	if len(ids) == 0 {
		return
	}
	q.hand(ids, h)
}

// safety is what became of a local run's safety task: tid is the task to
// delete when the run ends ("" for none), whose lease is extended while
// the run lasts; unsure says that its write failed but may have happened
// (its answer lost), in which case the extension of a task that is not
// there changes nothing.
type safety struct {
	tid    string
	unsure bool
}

// writeLocal reserves ids and writes their safety task, scheduled a lease
// ahead. errReserved says that an id was reserved or enqueued before; then
// nothing was written. It returns the task's id, also when the write
// failed (it may have happened all the same).
func (q *Redis) writeLocal(ctx context.Context, ids []held) (string, error) {
	tid := localPrefix + push.NewJobID()
	due := time.Now().Add(q.opts.LocalLease)
	plain := heldIDs(ids)
	ok, err := q.reserveTask(ctx, localType, tid, []byte(strings.Join(plain, ",")), due, plain)
	if err != nil {
		return tid, err
	}
	if !ok {
		return tid, errReserved
	}
	return tid, nil
}

// startLocal reserves ids, writes their safety task and then starts their
// run, each id in one of the slots TakeSlots took for it: until the task
// is written, an asynq task of one of them could still run it elsewhere.
// errReserved says that an id was reserved or enqueued before; then
// nothing was written.
func (q *Redis) startLocal(ctx context.Context, ids []held) error {
	tid, err := q.writeLocal(ctx, ids)
	if err != nil {
		return err
	}
	safe := make(chan safety, 1)
	safe <- safety{tid: tid}
	go q.runLocal(ids, safe)
	return nil
}

// startClaimed runs jobs created running for this node (RunNow) at once
// and writes their safety task meanwhile: no task of theirs exists
// anywhere (they were never enqueued), and a worker elsewhere that were
// handed one would make it uncertain, not send it. Should the write fail,
// they run all the same, and should this node then die before they
// settle, the engine's recovery of stale jobs makes them uncertain.
func (q *Redis) startClaimed(ctx context.Context, ids []held) {
	safe := make(chan safety, 1)
	go q.runLocal(ids, safe)
	tid, err := q.writeLocal(ctx, ids)
	if err == nil {
		safe <- safety{tid: tid}
		return
	}
	q.log.Warn("queue: jobs claimed by this node run without a safety task; should it stop before they settle, they become uncertain once they are stale", "jobs", len(ids), "err", err)
	if errors.Is(err, errReserved) {
		safe <- safety{} // nothing written, and the reservations are another's
		return
	}
	// A write that happened all the same is kept due a lease ahead while
	// the jobs run, and undone at the end.
	safe <- safety{tid: tid, unsure: true}
}

// heldIDs returns the ids of held.
func heldIDs(ids []held) []string {
	out := make([]string, len(ids))
	for i, it := range ids {
		out[i] = it.id
	}
	return out
}

// runLocal runs the ids of a local run, keeps their safety task due a
// lease ahead meanwhile (once it is written), hands back those deferred or
// failed, and then deletes the safety task and the reservations. Each id's
// slot counts as a running handler (see TakeSlots) until then.
func (q *Redis) runLocal(ids []held, safe <-chan safety) {
	defer func() {
		for range ids {
			q.busy.done()
		}
	}()
	ctx, cancel := context.WithTimeout(q.ctx, q.opts.Timeout)
	defer cancel()
	stop := make(chan struct{})
	extended := make(chan struct{})
	var task safety
	go func() {
		defer close(extended)
		task = <-safe
		if task.tid != "" {
			q.extendLocal(task.tid, stop, task.unsure)
		}
	}()
	failed := q.runHeld(ctx, ids)
	close(stop)
	<-extended // and the safety task's write has ended
	tid := task.tid
	if err := q.handBack(ctx, failed); err != nil {
		// The safety task falls due and hands every id back.
		q.log.Warn("queue: jobs of a local run go back to the queue when its lease ends", "jobs", len(ids), "err", err)
		return
	}
	if tid == "" {
		return
	}
	fctx, fcancel := context.WithTimeout(context.Background(), flushTimeout)
	defer fcancel()
	keys := []string{q.scheduledKey(), q.taskKey(tid), q.reservations()}
	args := make([]any, 0, len(ids)+1)
	args = append(args, tid)
	for _, it := range ids {
		args = append(args, it.id)
	}
	if err := finishLocalScript.Run(fctx, q.rdb, keys, args...).Err(); err != nil {
		// The jobs are settled; the safety task falls due, finds them so
		// (the engine leaves a settled job alone) and is deleted then.
		q.log.Warn("queue: the safety task of a finished local run is left to fall due", "jobs", len(ids), "err", err)
	}
}

// extendLocal moves the safety task's due time a lease ahead every third
// of a lease until stop is closed.
func (q *Redis) extendLocal(tid string, stop <-chan struct{}, unsure bool) {
	lease := q.opts.LocalLease
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), lease/3)
		due := time.Now().Add(lease).Unix()
		n, err := extendLocalScript.Run(ctx, q.rdb, []string{q.scheduledKey()}, due, tid).Int()
		cancel()
		switch {
		case err != nil:
			q.log.Warn("queue: cannot extend the lease of a local run", "err", err)
		case n == 0:
			// Due already (this node stalled past the lease): its jobs
			// are handed back; the engine decides on each. Or, after a
			// write that failed, never written.
			if !unsure {
				q.log.Warn("queue: the lease of a local run ended while it ran")
			}
			return
		}
	}
}

// processLocal works a safety task that fell due: its node died or lost
// Redis during the run. Every id goes back as a task of its own (as a
// batch delivered again does) and the reservations end.
func (q *Redis) processLocal(ctx context.Context, t *asynq.Task) error {
	ids := strings.Split(string(t.Payload()), ",")
	left := make([]leftover, len(ids))
	for i, id := range ids {
		left[i] = leftover{id: id}
	}
	if err := q.handBack(ctx, left); err != nil {
		return err
	}
	q.release(ids)
	return nil
}
