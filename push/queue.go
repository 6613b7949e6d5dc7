package push

import "context"

// Handler works one job. Queues call the engine's handler with job ids; the
// job row in the store is the truth and the handler tolerates ids it has
// already seen.
type Handler func(ctx context.Context, jobID string) error

// Queue carries job ids from the requests that create jobs to the workers
// that send them. Enqueueing an id twice is harmless.
type Queue interface {
	// Enqueue hands job ids to the workers. The jobs are already committed
	// to the store, so an id lost by the queue is found again by the
	// engine's recovery.
	Enqueue(ctx context.Context, jobIDs ...string) error
	// Start begins delivering ids to h with the queue's configured
	// concurrency. A queue with no workers only enqueues.
	Start(h Handler) error
	// Stop stops taking new ids and waits for running handlers until ctx
	// ends, then cancels their contexts and waits for them to return.
	Stop(ctx context.Context) error
}

// LocalRunner is a Queue that can run jobs in this process at once,
// claimed in the transaction that creates them. While it has free worker
// slots, a request takes some before it commits, creates those of its
// jobs that can be sent at once already running (claimed by this
// process) and hands them to RunNow after the commit: a send then waits
// for two commits (its request's and its outcome's) instead of three. A
// job created running is sent only by the run it was created for: should
// the process die before the job settles, the queue hands the id to a
// worker elsewhere, which finds it running and makes it uncertain, as a
// worker does with any job claimed by a worker that died.
type LocalRunner interface {
	Queue
	// TakeSlots takes up to n free worker slots without waiting and
	// returns how many it took: none while the queue is stopped or
	// stopping, or has no workers.
	TakeSlots(n int) int
	// DropSlots gives back n slots that TakeSlots took and RunNow will
	// not use (the request's transaction failed).
	DropSlots(n int)
	// RunNow runs h on each id at once, each in a slot TakeSlots took for
	// it, and meanwhile makes the ids safe against this process dying
	// (should it die, a worker elsewhere is handed them). It does not
	// wait for the runs. The ids' jobs are committed, running.
	RunNow(ids []string, h Handler)
}
