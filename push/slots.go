package push

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// SendSlots counts the jobs of each bot being sent at once, so that one
// bot (a platform that hangs, a flood from one account) cannot take every
// worker: a job of a bot whose slots are all taken goes back to the queue
// for a moment instead of waiting in a worker. LocalSendSlots counts in
// one process; a scale-out implementation (package cluster) counts across
// nodes.
type SendSlots interface {
	// Acquire takes one of limit slots of the bot for the job, for at
	// most lease (a holder that died frees its slot then), and reports
	// whether it got one. Taking a slot the job holds already renews it
	// (the engine renews a held slot every third of its lease).
	// An implementation that cannot count (its store is unreachable) says
	// yes rather than stop every send.
	Acquire(ctx context.Context, botID int64, jobID string, limit int, lease time.Duration) bool
	// Release gives back the job's slot.
	Release(ctx context.Context, botID int64, jobID string)
}

// LocalSendSlots is a SendSlots of one process. Its zero value is ready
// to use.
type LocalSendSlots struct {
	mu   sync.Mutex
	held map[int64]map[string]bool
}

var _ SendSlots = (*LocalSendSlots)(nil)

// Acquire implements SendSlots. A process's slots outlive none of its
// holders, so the lease is not needed.
func (s *LocalSendSlots) Acquire(_ context.Context, botID int64, jobID string, limit int, _ time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(map[int64]map[string]bool)
	}
	jobs := s.held[botID]
	if jobs[jobID] {
		return true
	}
	if len(jobs) >= limit {
		return false
	}
	if jobs == nil {
		jobs = make(map[string]bool)
		s.held[botID] = jobs
	}
	jobs[jobID] = true
	return true
}

// Release implements SendSlots.
func (s *LocalSendSlots) Release(_ context.Context, botID int64, jobID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := s.held[botID]
	delete(jobs, jobID)
	if len(jobs) == 0 {
		delete(s.held, botID)
	}
}

// Held returns the number of slots of the bot taken.
func (s *LocalSendSlots) Held(botID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held[botID])
}

// jobBots remembers the bots of the jobs this process made, and of those
// that found their bot's slots taken, so that when the queue hands one
// over its bot's slot is asked for before the store is read: a bot at its
// cap turns its jobs away at no cost to the others. It forgets a job when
// its sending is over, and everything when it grows past its bound (the
// jobs that other nodes send are never seen again here).
type jobBots struct {
	mu   sync.Mutex
	bots map[string]int64
}

// maxJobBots bounds jobBots: ten times the default backlog.
const maxJobBots = 10000

func (b *jobBots) note(jobID string, botID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bots == nil || len(b.bots) >= maxJobBots {
		b.bots = make(map[string]int64)
	}
	b.bots[jobID] = botID
}

func (b *jobBots) bot(jobID string) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.bots[jobID]
	return id, ok
}

func (b *jobBots) forget(jobID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.bots, jobID)
}

// botConcurrency is the cap on a bot's jobs being sent at once in force:
// Options.BotConcurrency, or a quarter of the queue's workers (at least
// one) when the queue tells them; 0 means no cap.
func (e *Engine) botConcurrency() int {
	switch n := e.opts.BotConcurrency; {
	case n > 0:
		return n
	case n < 0:
		return 0
	}
	if w, ok := e.queue.(interface{ Workers() int }); ok && w.Workers() > 0 {
		return max(1, w.Workers()/4)
	}
	return 0
}

// slotLease is how long a bot's slot outlives a holder that stopped
// renewing it (its node died): a worker renews the slot of the job it
// sends every third of it.
const slotLease = 5 * time.Second

// acquireSlot takes a slot of the bot for the job, or reports false when
// the bot has as many jobs being sent as its cap allows.
func (e *Engine) acquireSlot(ctx context.Context, botID int64, jobID string) bool {
	limit := e.botConcurrency()
	if limit == 0 {
		return true
	}
	return e.slots.Acquire(ctx, botID, jobID, limit, slotLease)
}

// holdSlot renews the job's slot of the bot until the returned function
// is called, which then gives the slot back.
func (e *Engine) holdSlot(ctx context.Context, botID int64, jobID string) (release func()) {
	limit := e.botConcurrency()
	if limit == 0 {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(slotLease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				e.slots.Acquire(context.WithoutCancel(ctx), botID, jobID, limit, slotLease)
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		e.releaseSlot(ctx, botID, jobID)
	}
}

// releaseSlot gives back the job's slot of the bot.
func (e *Engine) releaseSlot(ctx context.Context, botID int64, jobID string) {
	if e.botConcurrency() == 0 {
		return
	}
	e.slots.Release(context.WithoutCancel(ctx), botID, jobID)
}

// busyDelay is how long a job of a bot whose slots are taken waits in the
// queue before it is handed to a worker again: Options.BusyDelay, give or
// take a quarter, so that the jobs turned away together do not all come
// back together.
func (e *Engine) busyDelay() time.Duration {
	d := e.opts.BusyDelay
	return d - d/4 + rand.N(d/2+1)
}
