package push

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// State is a job's place in its life.
type State string

// Job states, as named in the HTTP contract.
const (
	StateQueued    State = "queued"
	StateRunning   State = "running"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateCanceled  State = "canceled"
	StateExpired   State = "expired"
	StateUncertain State = "uncertain"
)

// CanMove reports whether a job may move from one state to another. The
// legal moves are:
//
//	queued    → running | canceled | expired
//	running   → succeeded | failed | uncertain
//	uncertain → succeeded | failed
//
// Every other move is refused with a Conflict.
func CanMove(from, to State) bool {
	switch from {
	case StateQueued:
		return to == StateRunning || to == StateCanceled || to == StateExpired
	case StateRunning:
		return to == StateSucceeded || to == StateFailed || to == StateUncertain
	case StateUncertain:
		return to == StateSucceeded || to == StateFailed
	}
	return false
}

// States returns every job state, in the order of a job's life: the
// pending ones, then the settled ones.
func States() []State {
	return []State{StateQueued, StateRunning, StateSucceeded, StateFailed, StateCanceled, StateExpired, StateUncertain}
}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	switch s {
	case StateQueued, StateRunning, StateSucceeded, StateFailed, StateCanceled, StateExpired, StateUncertain:
		return true
	}
	return false
}

// Pending reports whether the job is still waiting or sending.
func (s State) Pending() bool { return s == StateQueued || s == StateRunning }

// Active reports whether the job counts against the backlog limits.
func (s State) Active() bool { return s.Pending() }

// Final reports whether the job will never change state again.
func (s State) Final() bool {
	return s == StateSucceeded || s == StateFailed || s == StateCanceled || s == StateExpired
}

// Settled reports whether the job's sending is over: it is final or its
// outcome needs verification. A request's synchronous wait ends when all its
// jobs are settled.
func (s State) Settled() bool { return s.Final() || s == StateUncertain }

// Refunds reports whether entering s returns the job's points.
func (s State) Refunds() bool { return s == StateCanceled || s == StateExpired }

// Job is one message to one target: the unit that is queued, sent, tracked
// and charged. MessageID is the integer id of its message record.
type Job struct {
	ID             string
	MessageID      int64
	AccountID      int64
	BotID          int64
	TargetID       int64 // 0 when the platform has no targets
	Platform       string
	TargetType     TargetType // the type the message is sent as; empty when there is no target
	Message        Message
	State          State
	Cost           int64 // points charged for this job
	Attempts       int
	Error          string // why the job failed or is uncertain
	PlatformIndex  string // the platform's id of the delivered message
	IdempotencyKey string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	StartedAt      time.Time // zero until a worker starts it
	FinishedAt     time.Time // zero until it is settled (the first time: an uncertain job resolved later keeps it)
	ExpiresAt      time.Time // a queued job not started by then expires
	ResolvedAt     time.Time // when an uncertain job was resolved; zero: it was not
	ResolvedBy     string    // who resolved it, as the audit trail names them
	Note           string    // the note given when it was resolved
	// RetryAt is set while a running job waits to call its platform again
	// after a retryable failure (nothing was sent): its worker handed it
	// back to the queue, due at RetryAt. It is zero while the job is
	// being sent, and for jobs in other states.
	RetryAt time.Time
}

// JobEvent is one move in a job's life.
type JobEvent struct {
	State State
	At    time.Time
	By    string // who made the move, for a resolution
	Note  string
}

// History returns the moves of the job's life so far, oldest first: queued
// when it was made, running when a worker started it, the state it
// settled in, and for a resolved job the uncertain state and then the
// resolution.
func (j Job) History() []JobEvent {
	h := []JobEvent{{State: StateQueued, At: j.CreatedAt}}
	if !j.StartedAt.IsZero() {
		h = append(h, JobEvent{State: StateRunning, At: j.StartedAt})
	}
	switch {
	case !j.ResolvedAt.IsZero():
		h = append(h, JobEvent{State: StateUncertain, At: j.FinishedAt},
			JobEvent{State: j.State, At: j.ResolvedAt, By: j.ResolvedBy, Note: j.Note})
	case j.State.Settled():
		h = append(h, JobEvent{State: j.State, At: j.FinishedAt})
	}
	return h
}

// Success is the job's success as the contract reports it: nil while the
// outcome is unknown (pending or uncertain).
func (j Job) Success() *bool {
	var v bool
	switch {
	case j.State == StateSucceeded:
		v = true
	case j.State.Final():
		v = false
	default:
		return nil
	}
	return &v
}

// JobMove is a compare-and-set move of one job: it happens only if the job
// is in state From.
type JobMove struct {
	ID            string
	From          State
	To            State
	At            time.Time
	Error         string // set on failed, uncertain, canceled, expired
	PlatformIndex string // set on succeeded
	// RetryAt is the job's RetryAt as the mover saw it, for a move from
	// running: the move happens only if it is still so (a job waiting to
	// retry is not one being sent).
	RetryAt time.Time
	// Job, when set, is the job as it stood in state From, as read from
	// or returned by the store (or as created). Job states never repeat,
	// so a job still in From is still that job, and the store may build
	// the moved job from it instead of reading the row back.
	Job *Job
}

// NewJobID returns a new job id: a version 7 UUID (RFC 9562), whose first
// 48 bits are the Unix time in milliseconds and whose other 74 are random.
// Ids made one after the other sort by time, so the store's index of job
// ids grows at one end (the jobs of one commit share its last page)
// instead of taking a write at a random place of it per job.
func NewJobID() string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic("push: crypto/rand failed: " + err.Error())
	}
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// ValidJobID reports whether s has the form of a job id (a UUID).
func ValidJobID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
