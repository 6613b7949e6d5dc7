package push

import "sync"

// handoff passes jobs between this process's requests and its workers
// while the requests wait: a worker starting a job finds it as the request
// created it (and need not read it), and a request woken by a completion
// notice finds its settled job here instead of reading the store. A job is
// handed over only after the transaction that created or settled it
// committed; whoever finds nothing (the job is another process's, or the
// request stopped waiting) reads the store as before.
type handoff struct {
	mu    sync.Mutex
	slots map[string]*handoffSlot
}

type handoffSlot struct {
	waiters int
	planned *Job // the job as created, queued
	job     *Job // the settled job, once handed over
}

func (h *handoff) init() { h.slots = make(map[string]*handoffSlot) }

// want registers a waiter for each of ids; planned, when given, are the
// jobs as the waiter created them, in the order of ids.
func (h *handoff) want(ids []string, planned []*Job) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, id := range ids {
		s := h.slots[id]
		if s == nil {
			s = &handoffSlot{}
			h.slots[id] = s
		}
		s.waiters++
		if planned != nil {
			s.planned = planned[i]
		}
	}
}

// plan returns the job id as its request created it, if the request
// still waits.
func (h *handoff) plan(id string) (Job, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.slots[id]; s != nil && s.planned != nil {
		return *s.planned, true
	}
	return Job{}, false
}

// unplan forgets the job id as its request created it: a worker claimed
// it, so it is no longer queued (a retry's wait hands it over again).
func (h *handoff) unplan(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.slots[id]; s != nil {
		s.planned = nil
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
