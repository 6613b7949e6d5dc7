// Package logwriter writes log lines to a file from a goroutine of its
// own, many lines in one system call when a server is busy.
package logwriter

import (
	"io"
	"sync"
)

// maxPending is how many bytes of lines may wait for the goroutine's next
// write; past it, Write waits, as a write to the file itself would.
const maxPending = 256 << 10

// Writer writes what it is given to an io.Writer from a goroutine of its
// own. Each Write should be one whole line, as log/slog's handlers make
// it. The lines written while the goroutine's write is under way go out
// together in its next one, so a server that logs a line per request
// makes one write system call for many lines when busy, and one per line
// when not: a line is never held back to wait for more, and lines keep
// their order. A Write returns once its line is taken, before it is
// written; Close writes what waits and ends the goroutine.
type Writer struct {
	out  io.Writer
	wake chan struct{}
	done chan struct{}

	mu      sync.Mutex
	room    sync.Cond // the goroutine took the waiting lines
	pending []byte
	closed  bool
}

// New starts a Writer to out.
func New(out io.Writer) *Writer {
	w := &Writer{out: out, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.room.L = &w.mu
	go w.loop()
	return w
}

// Write takes p to be written. After Close it writes p itself.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	for len(w.pending) >= maxPending && !w.closed {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return w.out.Write(p)
	}
	w.pending = append(w.pending, p...)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // the goroutine is awake already
	}
	return len(p), nil
}

// Close writes the lines that wait and ends the goroutine. It always
// returns nil: a log's write errors have nowhere to go.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	return nil
}

// loop writes the waiting lines each time it is woken, until closed.
func (w *Writer) loop() {
	defer close(w.done)
	var lines []byte
	for range w.wake {
		w.mu.Lock()
		lines, w.pending = w.pending, lines[:0]
		closed := w.closed
		w.room.Broadcast()
		w.mu.Unlock()
		if len(lines) > 0 {
			_, _ = w.out.Write(lines)
		}
		if closed {
			return
		}
	}
}
