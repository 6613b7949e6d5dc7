package push

import "sync"

// handoff passes settled jobs from this process's workers to its waiting
// requests, so that a request woken by a completion notice reads its job
// from here instead of from the store. A job is handed over only after
// the transaction that settled it committed; a request that finds nothing
// (the job was settled by another process) reads the store as before.
type handoff struct {
	mu    sync.Mutex
	slots map[string]*handoffSlot
}

type handoffSlot struct {
	waiters int
	job     *Job // the settled job, once handed over
}

func (h *handoff) init() { h.slots = make(map[string]*handoffSlot) }

// want registers a waiter for each of ids.
func (h *handoff) want(ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		s := h.slots[id]
		if s == nil {
			s = &handoffSlot{}
			h.slots[id] = s
		}
		s.waiters++
	}
}

// done unregisters a waiter of each of ids.
func (h *handoff) done(ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if s := h.slots[id]; s != nil {
			if s.waiters--; s.waiters <= 0 {
				delete(h.slots, id)
			}
		}
	}
}

// put hands over a settled job if a request waits for it.
func (h *handoff) put(j Job) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.slots[j.ID]; s != nil {
		s.job = &j
	}
}

// take returns the job handed over for id, if any.
func (h *handoff) take(id string) (Job, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.slots[id]; s != nil && s.job != nil {
		return *s.job, true
	}
	return Job{}, false
}
