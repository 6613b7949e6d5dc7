package logwriter_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/logwriter"
)

// gate is an io.Writer that records each write and, while closed, holds
// each write until it opens.
type gate struct {
	mu     sync.Mutex
	writes []string
	open   chan struct{} // nil: open
	began  chan struct{} // a write began (buffered)
}

func newGate(closed bool) *gate {
	g := &gate{began: make(chan struct{}, 1000)}
	if closed {
		g.open = make(chan struct{})
	}
	return g
}

func (g *gate) Write(p []byte) (int, error) {
	g.began <- struct{}{}
	if g.open != nil {
		<-g.open
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes = append(g.writes, string(p))
	return len(p), nil
}

func (g *gate) all() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.writes...)
}

// TestLinesKeepOrderAndArrive: lines from many goroutines all arrive,
// each whole, each goroutine's in its order, by the time Close returns.
func TestLinesKeepOrderAndArrive(t *testing.T) {
	g := newGate(false)
	w := logwriter.New(g)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range lines {
				fmt.Fprintf(w, "w%d line %d\n", i, n)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Join(g.all(), "")
	for _, line := range strings.SplitAfter(got, "\n") {
		if line == "" {
			continue
		}
		var i, n int
		if _, err := fmt.Sscanf(line, "w%d line %d\n", &i, &n); err != nil {
			t.Fatalf("a line arrived broken: %q", line)
		}
		if n != next[i] {
			t.Fatalf("writer %d: line %d arrived where %d was due", i, n, next[i])
		}
		next[i]++
	}
	want := make([]int, writers)
	for i := range want {
		want[i] = lines
	}
	if diff := cmp.Diff(want, next); diff != "" {
		t.Fatalf("lines arrived per writer (-want +got):\n%s", diff)
	}
}

// TestLinesWrittenMeanwhileGoTogether: a line is written at once, not
// held back for more; while that write is under way, Writes return
// without waiting for it, and their lines go out together in the next
// write, in order.
func TestLinesWrittenMeanwhileGoTogether(t *testing.T) {
	g := newGate(true)
	w := logwriter.New(g)
	fmt.Fprint(w, "first\n")
	select {
	case <-g.began:
	case <-time.After(5 * time.Second):
		t.Fatal("a lone line was not written")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3 {
			fmt.Fprintf(w, "then %d\n", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Write waited for the write under way")
	}
	close(g.open)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"first\n", "then 0\nthen 1\nthen 2\n"}
	if diff := cmp.Diff(want, g.all()); diff != "" {
		t.Fatalf("writes (-want +got):\n%s", diff)
	}
}

// TestWriteWaitsWhenFull: while the file does not take what it is given,
// lines wait up to a bound; past it, Write waits as a write to the file
// itself would, and nothing is dropped.
func TestWriteWaitsWhenFull(t *testing.T) {
	g := newGate(true)
	w := logwriter.New(g)
	line := strings.Repeat("x", 1023) + "\n"
	fmt.Fprint(w, line)
	<-g.began // the goroutine is stuck in its first write
	wrote := make(chan int, 1)
	go func() {
		n := 0
		for range 1024 { // 1 MiB, more than may wait
			fmt.Fprint(w, line)
			n++
		}
		wrote <- n
	}()
	select {
	case n := <-wrote:
		t.Fatalf("%d lines were taken while the file took none", n)
	case <-time.After(200 * time.Millisecond):
	}
	close(g.open)
	if n := <-wrote; n != 1024 {
		t.Fatalf("%d lines written", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g.all(), ""); got != strings.Repeat(line, 1025) {
		t.Fatalf("%d bytes arrived, want %d", len(got), 1025*len(line))
	}
}

// TestWriteAfterClose: a line written after Close goes to the file at
// once.
func TestWriteAfterClose(t *testing.T) {
	var buf bytes.Buffer
	w := logwriter.New(&buf)
	fmt.Fprint(w, "before\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(w, "after\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "before\nafter\n" {
		t.Fatalf("got %q", got)
	}
}
