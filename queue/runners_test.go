package queue

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"
)

// goroutineID reads the calling goroutine's id from its stack's header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := bytes.Cut(bytes.TrimPrefix(buf, []byte("goroutine ")), []byte(" "))
	return string(id)
}

func TestRunnersReuseTheirGoroutines(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newRunners(ctx)
	ran := make(chan string)
	p.run(func() { ran <- goroutineID() })
	first := <-ran
	// The runner takes the next job once it waits for one; until then a
	// job gets a runner of its own.
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.run(func() { ran <- goroutineID() })
		if <-ran == first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no job ran on the goroutine of the first (%s) in 5 s: every job got a new goroutine", first)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	p.wait()
}

func TestRunnersRunJobsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newRunners(ctx)
	const n = 5
	started, release := make(chan struct{}, n), make(chan struct{})
	for range n {
		p.run(func() {
			started <- struct{}{}
			<-release
		})
	}
	for i := range n {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d jobs started while the others ran: a job waited for a busy runner", i, n)
		}
	}
	close(release)
	cancel()
	p.wait()
}

func TestRunnersEndWithTheirContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := newRunners(ctx)
	done := make(chan struct{})
	p.run(func() { close(done) })
	<-done
	cancel()
	ended := make(chan struct{})
	go func() {
		p.wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(runnerIdle / 2):
		t.Fatalf("an idle runner did not end within %v of its context's end", runnerIdle/2)
	}
}
