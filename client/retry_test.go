package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// sameRequest fails the test unless every request the proxy read is the
// send: the same key (the result's) and the same body.
func sameRequest(t *testing.T, reqs []seen, key string) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the proxy read no request")
	}
	for i, r := range reqs {
		if r.Key != key || r.Body != reqs[0].Body {
			t.Fatalf("request %d: key %q body %s; want every attempt under the key %q with the body %s", i, r.Key, r.Body, key, reqs[0].Body)
		}
	}
}

// TestUnknownResultNeverResentUnderNewKey cuts the connection after the
// request was written and the server sent the message, before the answer
// reaches the client. The client must not send the message under another
// key: it returns an error matching ErrUnknownResult that carries the
// key, and Recover by that key finds the delivered message. The platform
// received it once.
func TestUnknownResultNeverResentUnderNewKey(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	p := newProxy(t, s.Root, func(int, seen) action { return forwardAndDrop })
	c := newClient(t, p.URL, client.Options{APIKey: s.fx.Key})
	res, err := c.Send(ctx, s.message("once"))
	if !errors.Is(err, client.ErrUnknownResult) {
		t.Fatalf("the answer was lost: want ErrUnknownResult, got %+v, %v", res, err)
	}
	if res.Outcome != client.Unknown || res.Key == "" || client.KeyOf(err) != res.Key {
		t.Fatalf("want the Unknown outcome and the key in the result and the error: %+v, %v", res, err)
	}
	sameRequest(t, p.requests(), res.Key)

	direct := s.client(t)
	r, err := direct.Recover(ctx, res.Key)
	if err != nil || r.Outcome != client.Delivered {
		t.Fatalf("recover by the key: %+v, %v", r, err)
	}
	if got := s.sent(); !cmp.Equal(got, []string{"once"}) {
		t.Fatalf("the platform received %q, want the message once", got)
	}
	if jobs := s.CountJobs(t); jobs != 1 {
		t.Fatalf("%d jobs, want 1", jobs)
	}
}

// TestRetryOn503SameKeyAndBody answers the first attempt 503 with
// Retry-After: 1, as a restarting Herald does: the client waits, sends the
// same body under the same key, and reads the delivery.
func TestRetryOn503SameKeyAndBody(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	p := newProxy(t, s.Root, func(n int, _ seen) action {
		if n == 0 {
			return answer503
		}
		return forward
	})
	c := newClient(t, p.URL, client.Options{APIKey: s.fx.Key})
	start := time.Now()
	res, err := c.Send(ctx, s.message("after a restart"))
	if err != nil || res.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", res, err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("the retry came after %v, before the Retry-After of 1s", waited)
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	sameRequest(t, reqs, res.Key)
	if got := s.sent(); !cmp.Equal(got, []string{"after a restart"}) {
		t.Fatalf("the platform received %q", got)
	}
}

// TestRetryOn429SameKeyAndBody spends the key's rate limit on the real
// server, so that the send is answered 429 with Retry-After: the client
// waits and sends the same body under the same key.
func TestRetryOn429SameKeyAndBody(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithLimits(push.Limits{RatePerMinute: 60}))
	p := newProxy(t, s.Root, func(int, seen) action { return forward })
	c := newClient(t, p.URL, client.Options{APIKey: s.fx.Key, MaxAttempts: 1})
	for {
		_, err := c.Me(ctx)
		if errors.Is(err, client.ReasonRateLimited) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	c = newClient(t, p.URL, client.Options{APIKey: s.fx.Key})
	before := len(p.requests())
	res, err := c.Send(ctx, s.message("rate limited first"))
	if err != nil || res.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", res, err)
	}
	reqs := p.requests()[before:]
	if len(reqs) < 2 {
		t.Fatalf("%d requests: want the 429 and a retry", len(reqs))
	}
	sameRequest(t, reqs, res.Key)
	if got := s.sent(); !cmp.Equal(got, []string{"rate limited first"}) {
		t.Fatalf("the platform received %q", got)
	}

	// A wait longer than MaxRetryWait is the caller's: refused at once.
	impatient := newClient(t, p.URL, client.Options{APIKey: s.fx.Key, MaxRetryWait: time.Millisecond, MaxAttempts: 1})
	for {
		res, err = impatient.Send(ctx, s.message("refused"))
		if err != nil {
			break
		}
	}
	var he *client.Error
	if !errors.As(err, &he) || he.Status != 429 || he.RetryAfter <= 0 || res.Outcome != client.Refused {
		t.Fatalf("want a 429 refusal with its Retry-After, got %+v, %v", res, err)
	}
}

// TestInternalErrorIsUnknown answers 500 internal: the server may have
// taken the message, so the client neither retries nor reads it as
// failed; it returns ErrUnknownResult with the key.
func TestInternalErrorIsUnknown(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	p := newProxy(t, s.Root, func(int, seen) action { return answer500 })
	c := newClient(t, p.URL, client.Options{APIKey: s.fx.Key})
	res, err := c.Send(ctx, s.message("maybe"))
	var he *client.Error
	if !errors.Is(err, client.ErrUnknownResult) || !errors.As(err, &he) || he.Reason != client.ReasonInternal || client.KeyOf(err) != res.Key {
		t.Fatalf("want ErrUnknownResult wrapping the 500, got %+v, %v", res, err)
	}
	if n := len(p.requests()); n != 1 {
		t.Fatalf("%d requests, want 1: a 500 is not retried", n)
	}
}

// TestDialErrorRetriedSameKey makes the first attempts fail to connect
// (nothing listens yet), which proves nothing was sent: the client
// retries, with the same key and body, and the message is sent once.
func TestDialErrorRetriedSameKey(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	up := make(chan *proxy, 1)
	time.AfterFunc(150*time.Millisecond, func() {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			up <- nil
			return
		}
		up <- servedProxy(t, ln, s.Root, func(int, seen) action { return forward })
	})
	c := newClient(t, "http://"+addr+"/api", client.Options{APIKey: s.fx.Key})
	res, err := c.Send(ctx, s.message("when it is up"))
	p := <-up
	if p == nil {
		t.Skip("the port was taken meanwhile")
	}
	if err != nil || res.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", res, err)
	}
	sameRequest(t, p.requests(), res.Key)
	if got := s.sent(); !cmp.Equal(got, []string{"when it is up"}) {
		t.Fatalf("the platform received %q", got)
	}

	// Nothing ever listens: the error says so, and is not an unknown
	// result (nothing was sent).
	dead := newClient(t, "http://"+addrNobodyListensOn(t)+"/api", client.Options{APIKey: s.fx.Key, MaxAttempts: 2})
	res, err = dead.Send(ctx, s.message("never"))
	if err == nil || errors.Is(err, client.ErrUnknownResult) || res.Outcome != client.Unknown {
		t.Fatalf("no server: want an error that is not an unknown result, got %+v, %v", res, err)
	}
}

// addrNobodyListensOn returns a loopback address whose port was just
// freed.
func addrNobodyListensOn(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDeadlineWhileServerHoldsTheSend ends the caller's context while the
// server holds the request (the platform is slow): the result is
// unknown, carrying the key, and Recover later finds the message.
func TestDeadlineWhileServerHoldsTheSend(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c := s.client(t)
	s.Telegram.Block()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	res, err := c.Send(short, s.message("held"))
	cancel()
	if !errors.Is(err, client.ErrUnknownResult) || !errors.Is(err, context.DeadlineExceeded) || client.KeyOf(err) != res.Key {
		t.Fatalf("want ErrUnknownResult wrapping the deadline, got %+v, %v", res, err)
	}
	s.Telegram.Unblock()
	r, err := c.Recover(ctx, res.Key)
	if err != nil || (r.Outcome != client.Pending && r.Outcome != client.Delivered) {
		t.Fatalf("recover: %+v, %v", r, err)
	}
	if j, err := c.Wait(ctx, r.JobID); err != nil || j.Outcome != client.Delivered {
		t.Fatalf("wait: %+v, %v", j, err)
	}
}

// TestReadsRetriedAfterDrop drops the connection of a job query: a query
// changes nothing, so the client asks again.
func TestReadsRetriedAfterDrop(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	direct := s.client(t)
	res, err := direct.Send(ctx, s.message("query me"))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, s.Root, func(n int, _ seen) action {
		if n == 0 {
			return forwardAndDrop
		}
		return forward
	})
	c := newClient(t, p.URL, client.Options{APIKey: s.fx.Key})
	j, err := c.Job(ctx, res.JobID)
	if err != nil || j.Outcome != client.Delivered {
		t.Fatalf("job: %+v, %v", j, err)
	}
	if n := len(p.requests()); n != 2 {
		t.Fatalf("%d requests, want the dropped one and its retry", n)
	}
}

// TestRedirects: a 307 or 308 keeps the method and body, and is followed
// (the same key and body reach the server); a 301, 302 or 303 would turn
// the send into a GET, so it is answered to the caller as a refusal naming
// where it points, and nothing is sent.
func TestRedirects(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	var got []string
	for _, status := range []int{307, 301} {
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = append(got, r.Method+" "+r.URL.Path)
			http.Redirect(w, r, s.Root+r.URL.Path, status)
		}))
		t.Cleanup(front.Close)
		c := newClient(t, front.URL+"/api", client.Options{APIKey: s.fx.Key})
		res, err := c.Send(ctx, s.message(fmt.Sprint("redirected ", status)))
		var he *client.Error
		switch status {
		case 307:
			if err != nil || res.Outcome != client.Delivered || len(s.jobsOfKey(t, res.Key)) != 1 {
				t.Fatalf("307: want the send followed and delivered under its key, got %+v, %v", res, err)
			}
		default:
			if !errors.As(err, &he) || he.Status != status || res.Outcome != client.Refused || !strings.Contains(he.Message, s.Root) {
				t.Fatalf("%d: want a refusal naming the redirect, got %+v, %v", status, res, err)
			}
		}
	}
	if diff := cmp.Diff([]string{"POST /api/openapi/v1/push/private", "POST /api/openapi/v1/push/private"}, got); diff != "" {
		t.Fatalf("the front saw (-want +got):\n%s", diff)
	}
	if sent := s.sent(); !cmp.Equal(sent, []string{"redirected 307"}) {
		t.Fatalf("the platform received %q", sent)
	}
}
