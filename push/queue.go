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
