package fake

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

// fakeServer is what the fake relay and webhook servers share: a loopback
// HTTP server and the switches that make it fail (scripted faults), slow
// down, block, or drop the connection after reading a request. Every
// request is read whole before a switch applies, as a real server would
// have read it before failing.
type fakeServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	faults   []Fault
	delay    time.Duration
	drops    int
	gate     chan struct{}
	requests int
	arrived  chan struct{}
}

// start serves handle on loopback until the test ends. handle gets the
// whole request body.
func (f *fakeServer) start(tb testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.arrived = make(chan struct{}, 1024)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			return
		}
		if f.intercept(w, r) {
			return
		}
		handle(w, r, body)
	}))
	if tb != nil {
		tb.Cleanup(f.Close)
	}
}

// intercept applies the switches to a request that was read. It reports
// whether the request was answered (or dropped) by a switch.
func (f *fakeServer) intercept(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	f.requests++
	select {
	case f.arrived <- struct{}{}:
	default:
	}
	gate, delay := f.gate, f.delay
	drop := false
	if f.drops > 0 {
		f.drops--
		drop = true
	}
	var fault *Fault
	if !drop && len(f.faults) > 0 {
		fault = &f.faults[0]
		f.faults = f.faults[1:]
	}
	f.mu.Unlock()

	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return true
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return true
		}
	}
	if drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return true
			}
		}
		panic(http.ErrAbortHandler)
	}
	if fault != nil {
		for k, vs := range fault.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(fault.Status)
		_, _ = io.WriteString(w, fault.Body)
		return true
	}
	return false
}

// URL is the fake's base URL.
func (f *fakeServer) URL() string { return f.srv.URL }

// Close stops the server; blocked requests are released.
func (f *fakeServer) Close() {
	f.Unblock()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Requests returns how many requests arrived, answered or not.
func (f *fakeServer) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// Arrived receives a value each time a request arrives.
func (f *fakeServer) Arrived() <-chan struct{} { return f.arrived }

// Fail makes the next requests answer the faults, one each, in order.
func (f *fakeServer) Fail(faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, faults...)
}

// SetDelay makes every answer wait d.
func (f *fakeServer) SetDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// DropNext makes the next n requests be read whole and then have their
// connection closed without an answer.
func (f *fakeServer) DropNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drops += n
}

// Block makes requests wait, after they are read, until Unblock.
func (f *fakeServer) Block() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate == nil {
		f.gate = make(chan struct{})
	}
}

// Unblock releases blocked requests.
func (f *fakeServer) Unblock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

// writeJSONAnswer writes v as a JSON answer with the status.
func writeJSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = jsonEncode(w, v)
}

func jsonEncode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// nopBody makes a request body of bytes already read.
func nopBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
