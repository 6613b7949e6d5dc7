package fake

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// switchboard is a fakeServer whose operation is the request's path and
// whose answers show what the switches decided: the fault's text, or "ok".
func switchboard(t *testing.T, perOp bool) *fakeServer[string] {
	f := &fakeServer[string]{}
	f.serve(t, "/send", perOp, func(w http.ResponseWriter, r *http.Request) {
		c := f.take(r.URL.Path)
		if !f.wait(r, c.gate, c.delay) {
			return
		}
		switch {
		case c.drop:
			dropConnection(w)
		case c.fault != nil:
			_, _ = io.WriteString(w, *c.fault)
		default:
			_, _ = io.WriteString(w, "ok")
		}
	})
	return f
}

// answer returns the body of the answer to a request of op, or "dropped".
// It posts: the client would send a dropped GET again.
func answer(t *testing.T, f *fakeServer[string], op string) string {
	t.Helper()
	resp, err := http.Post(f.URL()+op, "text/plain", strings.NewReader("x"))
	if err != nil {
		return "dropped"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestSwitchesPerOperation(t *testing.T) {
	f := switchboard(t, true)
	f.enqueue("/send", 0, "send fault 1", "send fault 2")
	f.enqueue("/token", 1, "token fault after one")
	f.dropNext("/send", 1)
	var got []string
	for _, op := range []string{"/token", "/send", "/token", "/send", "/token", "/send", "/send"} {
		got = append(got, op+": "+answer(t, f, op))
	}
	want := []string{
		"/token: ok",     // the token fault lets one request pass
		"/send: dropped", // a drop goes before a fault, which stays queued
		"/token: token fault after one",
		"/send: send fault 1",
		"/token: ok",
		"/send: send fault 2",
		"/send: ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("answers (-want +got):\n%s", diff)
	}
	if f.requestsTo("/send") != 4 || f.requestsTo("/token") != 3 {
		t.Fatalf("counted %d sends and %d token requests, want 4 and 3", f.requestsTo("/send"), f.requestsTo("/token"))
	}
	if n := len(f.Arrived()); n != 4 {
		t.Fatalf("Arrived signalled %d times, want once a send", n)
	}
}

func TestSwitchesOneQueue(t *testing.T) {
	f := switchboard(t, false)
	f.enqueue("/send", 0, "first", "second")
	f.dropNext("/send", 1)
	var got []string
	for _, op := range []string{"/other", "/send", "/other", "/send"} {
		got = append(got, op+": "+answer(t, f, op))
	}
	want := []string{"/other: dropped", "/send: first", "/other: second", "/send: ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("answers (-want +got):\n%s", diff)
	}
}

func TestSwitchesBlockAndDelay(t *testing.T) {
	f := switchboard(t, true)
	f.Block()
	done := make(chan string)
	go func() { done <- answer(t, f, "/send") }()
	<-f.Arrived()
	select {
	case a := <-done:
		t.Fatalf("a blocked request was answered: %q", a)
	case <-time.After(50 * time.Millisecond):
	}
	f.Unblock()
	if a := <-done; a != "ok" {
		t.Fatalf("released request answered %q", a)
	}

	// A client that gives up while the request waits leaves it abandoned.
	f.SetDelay(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL()+"/send", nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) && (err == nil || !strings.Contains(err.Error(), "deadline")) {
		t.Fatalf("delayed request: %v, want the client's deadline", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.Abandoned() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("abandoned %d, want 1", f.Abandoned())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
