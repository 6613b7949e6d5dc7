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

// LocalNotifier is the in-process Notifier: it reaches waiters in the same
// process only.
type LocalNotifier struct {
	mu   sync.Mutex
	subs map[string]map[*subscription]struct{}
}

type subscription struct {
	ch chan string
}

// NewLocalNotifier returns an empty LocalNotifier.
func NewLocalNotifier() *LocalNotifier {
	return &LocalNotifier{subs: make(map[string]map[*subscription]struct{})}
}

// Notify implements Notifier.
func (n *LocalNotifier) Notify(_ context.Context, jobIDs ...string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range jobIDs {
		for s := range n.subs[id] {
			select {
			case s.ch <- id:
			default: // the waiter has enough notices to re-read the store
			}
		}
	}
	return nil
}

// Subscribe implements Notifier.
func (n *LocalNotifier) Subscribe(jobIDs []string) (<-chan string, func()) {
	s := &subscription{ch: make(chan string, len(jobIDs)+1)}
	n.mu.Lock()
	for _, id := range jobIDs {
		m := n.subs[id]
		if m == nil {
			m = make(map[*subscription]struct{})
			n.subs[id] = m
		}
		m[s] = struct{}{}
	}
	n.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			for _, id := range jobIDs {
				if m := n.subs[id]; m != nil {
					delete(m, s)
					if len(m) == 0 {
						delete(n.subs, id)
					}
				}
			}
		})
	}
}
