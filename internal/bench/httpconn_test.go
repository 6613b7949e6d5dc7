package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHTTPConnAgainstNetHTTP: the load generator's connection speaks to a
// real net/http server: headers and body arrive as sent, answers framed by
// Content-Length, chunked coding and the connection's close are read
// whole, and the connection is reused while the server keeps it open.
func TestHTTPConnAgainstNetHTTP(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("Idempotency-Key") != "i-1" {
			http.Error(w, "bad request line or headers", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/api/small":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"echo":%q}`, body)
		case "/api/large": // too big for net/http's buffer: chunked
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write(bytes.Repeat([]byte("x"), 100_000))
		case "/api/close":
			w.Header().Set("Connection", "close")
			_, _ = w.Write([]byte("bye"))
		case "/api/empty":
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	host := strings.TrimPrefix(srv.URL, "http://")
	c := &httpConn{addr: host, host: host, timeout: 5 * time.Second, conns: &connSet{}}
	defer c.close()
	headers := []header{{"Content-Type", "application/json"}, {"Authorization", "Bearer k"}, {"Idempotency-Key", "i-1"}}
	tests := []struct {
		path      string
		status    int
		body      string
		openConns int64 // connections made so far, after this request
	}{
		{"/api/small", 200, `{"echo":"{\"a\":1}"}`, 1},
		{"/api/small", 200, `{"echo":"{\"a\":1}"}`, 1},
		{"/api/large", 202, strings.Repeat("x", 100_000), 1},
		{"/api/empty", 204, "", 1},
		{"/api/close", 200, "bye", 1},
		{"/api/small", 200, `{"echo":"{\"a\":1}"}`, 2},
	}
	var buf bytes.Buffer
	for i, tt := range tests {
		status, err := c.post(tt.path, headers, []byte(`{"a":1}`), &buf)
		if err != nil {
			t.Fatalf("%d %s: %v", i, tt.path, err)
		}
		got := struct {
			Status int
			Body   string
			Conns  int64
		}{status, buf.String(), conns.Load()}
		want := struct {
			Status int
			Body   string
			Conns  int64
		}{tt.status, tt.body, tt.openConns}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%d %s (-want +got):\n%s", i, tt.path, diff)
		}
	}
}

// TestReadAnswerRefusesMalformed: a broken answer is an error, never a
// status read from garbage.
func TestReadAnswerRefusesMalformed(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n"},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n"},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
		{"cut headers", "HTTP/1.1 200 OK\r\nContent-Le"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if status, _, err := readAnswer(bufio.NewReader(strings.NewReader(tt.raw)), &buf); err == nil {
				t.Fatalf("read %d %q from a malformed answer, want an error", status, buf.String())
			}
		})
	}
}

// TestHTTPConnCut: cutting the load's connections ends a request that
// the server holds (it is cut while waiting for its answer, not before it
// was sent), and refuses new connections.
func TestHTTPConnCut(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	host := strings.TrimPrefix(srv.URL, "http://")
	conns := &connSet{}
	c := &httpConn{addr: host, host: host, timeout: time.Minute, conns: conns}
	errc := make(chan error, 1)
	go func() {
		_, err := c.post("/", nil, nil, new(bytes.Buffer))
		errc <- err
	}()
	<-arrived
	conns.cut()
	select {
	case err := <-errc:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("a cut request: %v, want the deadline's timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cut did not end the waiting request")
	}
	if _, err := c.post("/", nil, nil, new(bytes.Buffer)); err != errCut {
		t.Fatalf("a request after the cut: %v, want errCut", err)
	}
}
