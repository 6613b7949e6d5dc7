package push

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// jobReads gathers the reads of the jobs that workers start at the same
// moment into one read of them all. A worker that did not create a job
// (a worker node, or a job whose request stopped waiting) reads it before
// it claims it; a queue hands a worker its jobs in batches, whose workers
// start together, so their reads become one statement instead of one each
// inside their claims' transactions. A job read this way is claimed as
// one its request planned: the claim checks that it is still in the state
// read and, should it not be, decides on the job as it is then.
type jobReads struct {
	mu      sync.Mutex
	pending []*jobRead
	running bool
}

// jobRead is one worker waiting for its job.
type jobRead struct {
	id   string
	done chan jobReadResult // buffered
}

type jobReadResult struct {
	job Job
	ok  bool
}

// jobReadTimeout bounds one read of the gathered jobs.
const jobReadTimeout = 10 * time.Second

// readJob returns the job id as the store has it now, read together with
// the jobs other workers read at the same moment; ok is false when it
// could not be (the read failed or found no such job, or ctx ended), and
// the caller then reads it in its transaction, as without.
func (e *Engine) readJob(ctx context.Context, id string) (Job, bool) {
	r := &jobRead{id: id, done: make(chan jobReadResult, 1)}
	e.reads.mu.Lock()
	e.reads.pending = append(e.reads.pending, r)
	if !e.reads.running {
		e.reads.running = true
		go e.readJobs()
	}
	e.reads.mu.Unlock()
	select {
	case res := <-r.done:
		return res.job, res.ok
	case <-ctx.Done():
		return Job{}, false
	}
}

// readJobs reads the waiting workers' jobs until none wait: those that
// come while a read is under way go in the next.
func (e *Engine) readJobs() {
	for {
		// Workers started at the same moment (one batch of the queue)
		// join the read: it yields until a yield brings no new one.
		e.gatherReads()
		e.reads.mu.Lock()
		reads := e.reads.pending
		e.reads.pending = nil
		if len(reads) == 0 {
			e.reads.running = false
			e.reads.mu.Unlock()
			return
		}
		e.reads.mu.Unlock()
		ids := make([]string, 0, len(reads))
		seen := make(map[string]bool, len(reads))
		for _, r := range reads {
			if !seen[r.id] {
				seen[r.id] = true
				ids = append(ids, r.id)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), jobReadTimeout)
		jobs, err := e.store.Jobs(ctx, ids)
		cancel()
		byID := make(map[string]Job, len(jobs))
		if err == nil {
			for _, j := range jobs {
				byID[j.ID] = j
			}
		}
		for _, r := range reads {
			j, ok := byID[r.id]
			r.done <- jobReadResult{j, ok}
		}
	}
}

// gatherYields bounds the yields of gatherReads.
const gatherYields = 8

// gatherReads yields to the goroutines ready to run until one yield adds
// no read to those waiting (or gatherYields did): the workers a queue
// batch starts reach their reads within microseconds of each other, on
// other threads too.
func (e *Engine) gatherReads() {
	last := -1
	for range gatherYields {
		runtime.Gosched()
		e.reads.mu.Lock()
		n := len(e.reads.pending)
		e.reads.mu.Unlock()
		if n == last {
			return
		}
		last = n
	}
}
