package push

import (
	"context"
	"sync"
)

// Notifier tells waiting requests that jobs have settled. A notice is a
// hint: the waiter reads the job from the store afterwards, so a lost or
// repeated notice costs time, never correctness.
type Notifier interface {
	// Notify announces that the jobs have changed state.
	Notify(ctx context.Context, jobIDs ...string) error
	// Subscribe returns a channel that receives the ids of the given jobs
	// as they are notified, and a function that ends the subscription.
	Subscribe(jobIDs []string) (<-chan string, func())
}

// SettledNotifier is a Notifier whose notices can carry the settled jobs
// to the waiters of other processes, so that a waiter woken by one answers
// without reading the job from the store. A carried job is as the
// transaction that settled it committed it, without its Message (which
// never changes, and which the waiter has).
type SettledNotifier interface {
	Notifier
	// NotifySettled announces that the jobs have settled, with their rows.
	NotifySettled(ctx context.Context, jobs ...Job) error
	// OnSettled sets the function given each job carried by the notices
	// of other processes that a waiter of this process waits for, before
	// the waiter is woken.
	OnSettled(fn func(Job))
}

// LocalNotifier is the in-process Notifier: it reaches waiters in the same
// process only.
type LocalNotifier struct {
	mu sync.Mutex
	// subs are the subscriptions by job id: almost always one per job
	// (its request), more while resubmissions of it wait too.
	subs map[string][]*subscription
}

type subscription struct {
	n      *LocalNotifier
	ch     chan string
	jobIDs []string
	ended  bool // under n.mu
}

// NewLocalNotifier returns an empty LocalNotifier.
func NewLocalNotifier() *LocalNotifier {
	return &LocalNotifier{subs: make(map[string][]*subscription)}
}

// Notify implements Notifier.
func (n *LocalNotifier) Notify(_ context.Context, jobIDs ...string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range jobIDs {
		for _, s := range n.subs[id] {
			select {
			case s.ch <- id:
			default: // the waiter has enough notices to re-read the store
			}
		}
	}
	return nil
}

// Waiting reports whether a waiter subscribed to the job.
func (n *LocalNotifier) Waiting(jobID string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.subs[jobID]) > 0
}

// Subscribe implements Notifier.
func (n *LocalNotifier) Subscribe(jobIDs []string) (<-chan string, func()) {
	s := &subscription{n: n, ch: make(chan string, len(jobIDs)+1), jobIDs: jobIDs}
	n.mu.Lock()
	for _, id := range jobIDs {
		n.subs[id] = append(n.subs[id], s)
	}
	n.mu.Unlock()
	return s.ch, s.end
}

// end ends the subscription; a second call does nothing.
func (s *subscription) end() {
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	for _, id := range s.jobIDs {
		subs := n.subs[id]
		for i, o := range subs {
			if o == s {
				subs = append(subs[:i], subs[i+1:]...)
				break
			}
		}
		if len(subs) == 0 {
			delete(n.subs, id)
		} else {
			n.subs[id] = subs
		}
	}
}
