package push

import (
	"errors"
	"fmt"
	"time"
)

// Pacer is implemented by platforms that space out sends to stay within
// the platform's published limits. Before a worker claims a job, the
// engine asks the platform for a send slot; when there is none yet, the job
// stays queued and goes back to the queue for later, so a burst waits in
// Herald's queue (within its queue-wait limit) instead of failing with the
// platform's "too many requests".
type Pacer interface {
	// Pace claims a send slot for d and returns 0, or claims nothing and
	// returns how long to wait before asking again.
	Pace(d Delivery) time.Duration
}

// PaceReleaser is a Pacer that can give back a slot: the engine may claim
// a job's send slot before the request that creates the job commits (see
// LocalRunner), and gives the slot back when the request is refused, so
// that a refused request leaves the platform's pace as it found it. A
// Pacer without it keeps such slots until they pass.
type PaceReleaser interface {
	Pacer
	// ReleasePace gives back the slot Pace claimed for d, whose send will
	// not be made.
	ReleasePace(d Delivery)
}

// DeferError is returned by the engine's Handler when a job is not to be
// worked yet (pacing, a retry's wait, its bot's cap on jobs sent at once):
// the queue hands the id back after After. It is not a failure.
type DeferError struct {
	JobID string
	After time.Duration
	// Busy says that the job's bot had as many jobs being sent as its
	// cap allows (see Options.BotConcurrency).
	Busy bool
}

// Error implements the error interface.
func (e *DeferError) Error() string {
	if e.Busy {
		return fmt.Sprintf("job %s handed back to the queue for %s: its bot has as many jobs being sent as its cap allows", e.JobID, e.After)
	}
	return fmt.Sprintf("job %s handed back to the queue for %s", e.JobID, e.After)
}

// DeferredFor reports whether err asks for a job to be handed back later,
// and after how long.
func DeferredFor(err error) (time.Duration, bool) {
	var de *DeferError
	if errors.As(err, &de) {
		return de.After, true
	}
	return 0, false
}
