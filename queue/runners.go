package queue

import (
	"context"
	"sync"
	"time"
)

// runnerIdle is how long a runner waits for its next job before it ends.
const runnerIdle = 10 * time.Second

// runners are the goroutines that run a Redis queue's jobs. A runner stays
// for the next job rather than ending with its job, so that a job starts on
// a stack already grown to what a send needs: a new goroutine per job grew
// its stack anew each time, by copying it several times over (5 % of a busy
// node's CPU). The number of runners follows the jobs run at once, which
// the worker slots bound; a runner idle for runnerIdle, or once ctx ends,
// ends.
type runners struct {
	ctx  context.Context
	work chan func()
	wg   sync.WaitGroup
}

func newRunners(ctx context.Context) *runners {
	return &runners{ctx: ctx, work: make(chan func())}
}

// run runs f on an idle runner, or on a new one when none is idle.
func (p *runners) run(f func()) {
	select {
	case p.work <- f:
	default:
		p.wg.Add(1)
		go p.loop(f)
	}
}

// wait waits for every runner to end: after their context ended, once
// their jobs returned.
func (p *runners) wait() { p.wg.Wait() }

func (p *runners) loop(f func()) {
	defer p.wg.Done()
	idle := time.NewTimer(runnerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(runnerIdle)
		select {
		case f = <-p.work:
		case <-idle.C:
			return
		case <-p.ctx.Done():
			return
		}
	}
}
