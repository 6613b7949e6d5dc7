package fake

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Fault is a scripted answer of a fake platform server: a status, headers
// and a body in the platform's own error shape (each fake has a function
// that builds its shapes, e.g. NtfyFault).
type Fault struct {
	Status int
	Header http.Header
	Body   string
}

// fakeServer is what every fake platform server shares: a loopback HTTP
// server, the mutex that guards the fake's state, and the switches that
// make it misbehave — scripted faults, a delay, a block, dropping the
// connection after reading a request — with request counts and an arrival
// channel. A fake with several endpoints names them as operations
// ("token", "upload", "send"…); its faults and drops are kept per
// operation, or in one queue for every request. F is the fake's fault
// type.
type fakeServer[F any] struct {
	srv    *httptest.Server
	perOp  bool   // faults and drops are kept per operation
	sendOp string // the operation Arrived signals

	mu        sync.Mutex
	faults    map[string][]scripted[F]
	drops     map[string]int
	requests  map[string]int
	delay     time.Duration
	gate      chan struct{} // while non-nil, requests wait for it to close
	abandoned int           // requests whose client went away while they waited
	arrived   chan struct{}
}

// scripted is a queued fault that answers once pass more requests of its
// operation went by.
type scripted[F any] struct {
	pass  int
	fault F
}

// claim is what the switches decided for one request.
type claim[F any] struct {
	fault *F // answer this instead of handling the request
	drop  bool
	gate  chan struct{}
	delay time.Duration
}

// serve starts handler on loopback until the test ends. sendOp is the
// operation whose requests Arrived signals; perOp keeps faults and drops
// per operation instead of in one queue.
func (f *fakeServer[F]) serve(tb testing.TB, sendOp string, perOp bool, handler http.HandlerFunc) {
	f.sendOp, f.perOp = sendOp, perOp
	f.faults = make(map[string][]scripted[F])
	f.drops = make(map[string]int)
	f.requests = make(map[string]int)
	f.arrived = make(chan struct{}, 1024)
	f.srv = httptest.NewServer(handler)
	if tb != nil {
		tb.Cleanup(f.Close)
	}
}

// URL is the fake's base URL.
func (f *fakeServer[F]) URL() string { return f.srv.URL }

// Close stops the server; blocked requests are released.
func (f *fakeServer[F]) Close() {
	f.Unblock()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Arrived receives a value each time a send request arrives.
func (f *fakeServer[F]) Arrived() <-chan struct{} { return f.arrived }

// Abandoned returns how many requests were dropped unanswered because
// their client went away while they were blocked or delayed.
func (f *fakeServer[F]) Abandoned() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.abandoned
}

// SetDelay makes every answer wait d.
func (f *fakeServer[F]) SetDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// Block makes requests wait, after they are read, until Unblock.
func (f *fakeServer[F]) Block() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate == nil {
		f.gate = make(chan struct{})
	}
}

// Unblock releases blocked requests.
func (f *fakeServer[F]) Unblock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

// queue is the key of op's faults and drops.
func (f *fakeServer[F]) queue(op string) string {
	if f.perOp {
		return op
	}
	return ""
}

// enqueue makes the next requests of op answer the faults, one each, in
// order, once pass requests of op went by.
func (f *fakeServer[F]) enqueue(op string, pass int, faults ...F) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queue(op)
	for _, fault := range faults {
		f.faults[q] = append(f.faults[q], scripted[F]{pass: pass, fault: fault})
	}
}

// dropNext makes the next n requests of op be read whole and then have
// their connection closed without an answer.
func (f *fakeServer[F]) dropNext(op string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drops[f.queue(op)] += n
}

// requestsTo returns how many requests of op arrived, answered or not.
func (f *fakeServer[F]) requestsTo(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[op]
}

// take counts a request of op, signals its arrival, and claims op's next
// drop or, failing that, its next fault.
func (f *fakeServer[F]) take(op string) claim[F] {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.takeLocked(op)
}

// takeLocked is take for a caller that holds f.mu.
func (f *fakeServer[F]) takeLocked(op string) claim[F] {
	f.requests[op]++
	if op == f.sendOp {
		select {
		case f.arrived <- struct{}{}:
		default:
		}
	}
	c := claim[F]{gate: f.gate, delay: f.delay}
	q := f.queue(op)
	if f.drops[q] > 0 {
		f.drops[q]--
		c.drop = true
		return c
	}
	if s := f.faults[q]; len(s) > 0 {
		if s[0].pass > 0 {
			s[0].pass--
			return c
		}
		fault := s[0].fault
		c.fault = &fault
		f.faults[q] = s[1:]
	}
	return c
}

// wait holds a request until gate (if any) is closed, then for d. It
// reports false, counting the request as abandoned, when the client went
// away first.
func (f *fakeServer[F]) wait(r *http.Request, gate chan struct{}, d time.Duration) bool {
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			f.abandon()
			return false
		}
	}
	if d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			f.abandon()
			return false
		}
	}
	return true
}

func (f *fakeServer[F]) abandon() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abandoned++
}

// oneQueue is a fakeServer whose faults and drops apply to any request,
// in one queue.
type oneQueue[F any] struct{ fakeServer[F] }

// Requests returns how many send requests arrived, answered or not.
func (f *oneQueue[F]) Requests() int { return f.requestsTo(f.sendOp) }

// Fail makes the next requests answer the faults, one each, in order.
func (f *oneQueue[F]) Fail(faults ...F) { f.enqueue("", 0, faults...) }

// DropNext makes the next n requests be read whole and then have their
// connection closed without an answer.
func (f *oneQueue[F]) DropNext(n int) { f.dropNext("", n) }

// opQueues is a fakeServer whose faults and drops are kept per operation.
type opQueues[F any] struct{ fakeServer[F] }

// Requests returns how many requests of an operation arrived.
func (f *opQueues[F]) Requests(op string) int { return f.requestsTo(op) }

// DropNext makes the next n requests of an operation be read whole and
// then have their connection closed without an answer.
func (f *opQueues[F]) DropNext(op string, n int) { f.dropNext(op, n) }

// simpleServer is what the fake relay and webhook servers share: one
// operation, and Fault answers. Every request is read whole before a
// switch applies, as a real server would have read it before failing.
type simpleServer struct{ oneQueue[Fault] }

// start serves handle on loopback until the test ends. handle gets the
// whole request body.
func (f *simpleServer) start(tb testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.serve(tb, "send", false, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			return
		}
		c := f.take("send")
		if !f.wait(r, c.gate, c.delay) {
			return
		}
		switch {
		case c.drop:
			dropConnection(w)
		case c.fault != nil:
			c.fault.write(w)
		default:
			handle(w, r, body)
		}
	})
}

// snapshot returns a copy of a list a fake keeps, taken under its mutex.
func snapshot[T any](mu *sync.Mutex, list *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *list...)
}

// recent keeps, in place, the times of sends less than window before now:
// what a rate limit counts.
func recent(sends []time.Time, now time.Time, window time.Duration) []time.Time {
	return slices.DeleteFunc(sends, func(t time.Time) bool { return now.Sub(t) >= window })
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// writeJSONAnswer writes v as a JSON answer with the status.
func writeJSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// nopBody makes a request body of bytes already read.
func nopBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
