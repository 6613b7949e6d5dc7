package queue

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// handlerPanic logs a job handler's panic, recovered as r, and returns
// the error the id then fails with: both queues hand it back (or retry
// it), and the engine makes a job that was being sent uncertain. The
// panic's value may hold what a platform call held (a URL with a bot
// token): its type and the stack are logged, not the value.
func handlerPanic(log *slog.Logger, id string, r any) error {
	log.Error("job handler panicked; the job is handed back to the queue", "job", id, "panic", fmt.Sprintf("%T", r), "stack", string(debug.Stack()))
	return fmt.Errorf("queue: handler panic (%T)", r)
}
