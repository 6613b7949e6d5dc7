package push

import "time"

// Limits are the engine's bounds. Zero fields take the defaults of the HTTP
// contract (see DefaultLimits).
type Limits struct {
	MaxContent     int           // characters (Unicode code points) of content; default 2000
	MaxTargets     int           // targets of one batch request; default 50
	SyncWait       time.Duration // how long a send waits for its jobs before answering 202; default 8 s
	RatePerMinute  int           // requests per minute per API key; default 120; negative disables
	BacklogPerBot  int           // queued + running jobs of one bot; default 100
	BacklogTotal   int           // queued + running jobs of the whole service; default 1000
	QueueWait      time.Duration // a job not started within this time expires; default 1 h
	IdempotencyTTL time.Duration // how long idempotency records are kept; default 30 days
	// JobRetention is how long a job that ended for good (succeeded,
	// failed, canceled, expired) is kept after its last change; default
	// 90 days; negative keeps jobs forever. An uncertain job is kept until
	// someone resolves it. It cannot be shorter than IdempotencyTTL: a
	// replayed request must find its jobs.
	JobRetention   time.Duration
	SendWindow     time.Duration // how long a started job may retry retryable platform errors; default 1 min
	AttemptTimeout time.Duration // the time cap of one platform call; default 30 s
}

// DefaultLimits returns the limits of the HTTP contract.
func DefaultLimits() Limits {
	return Limits{
		MaxContent:     2000,
		MaxTargets:     50,
		SyncWait:       8 * time.Second,
		RatePerMinute:  120,
		BacklogPerBot:  100,
		BacklogTotal:   1000,
		QueueWait:      time.Hour,
		IdempotencyTTL: 30 * 24 * time.Hour,
		JobRetention:   90 * 24 * time.Hour,
		SendWindow:     time.Minute,
		AttemptTimeout: 30 * time.Second,
	}
}

// OutcomeGrace is how long a job's handler may still run after its
// context was canceled: a send whose platform answered keeps trying to
// record the answer through a database outage for the attempt timeout plus
// a minute, so that a known outcome is not lost. A queue's Stop waits that
// long for its handlers after canceling them.
func (l Limits) OutcomeGrace() time.Duration { return l.withDefaults().AttemptTimeout + time.Minute }

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxContent <= 0 {
		l.MaxContent = d.MaxContent
	}
	if l.MaxTargets <= 0 {
		l.MaxTargets = d.MaxTargets
	}
	if l.SyncWait <= 0 {
		l.SyncWait = d.SyncWait
	}
	if l.RatePerMinute == 0 {
		l.RatePerMinute = d.RatePerMinute
	}
	if l.BacklogPerBot <= 0 {
		l.BacklogPerBot = d.BacklogPerBot
	}
	if l.BacklogTotal <= 0 {
		l.BacklogTotal = d.BacklogTotal
	}
	if l.QueueWait <= 0 {
		l.QueueWait = d.QueueWait
	}
	if l.IdempotencyTTL <= 0 {
		l.IdempotencyTTL = d.IdempotencyTTL
	}
	if l.JobRetention == 0 {
		l.JobRetention = d.JobRetention
	}
	if l.SendWindow <= 0 {
		l.SendWindow = d.SendWindow
	}
	if l.AttemptTimeout <= 0 {
		l.AttemptTimeout = d.AttemptTimeout
	}
	return l
}

// Points configures the points system.
type Points struct {
	Enabled      bool  // charge sends; off by default
	Initial      int64 // balance of a new account; default 100 (negative means 0)
	CostPerJob   int64 // points per target; default 1
	RefundFailed bool  // also refund jobs that end failed (policy option; off by default)
}

func (p Points) withDefaults() Points {
	switch {
	case p.Initial == 0:
		p.Initial = 100
	case p.Initial < 0:
		p.Initial = 0
	}
	if p.CostPerJob <= 0 {
		p.CostPerJob = 1
	}
	return p
}
