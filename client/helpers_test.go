package client_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// server is a Herald on loopback for a test, seeded with an account, its
// key, a Telegram bot on the fake server and a bound user target.
type server struct {
	*testkit.Herald
	fx testkit.Fixture
}

// newServer starts a Herald for the test.
func newServer(t *testing.T, opts ...testkit.Option) server {
	t.Helper()
	h := testkit.New(t, opts...)
	return server{Herald: h, fx: h.Seed(t)}
}

// client returns a client of the server's API with the fixture's key,
// polling fast.
func (s server) client(t *testing.T) *client.Client {
	t.Helper()
	return newClient(t, s.URL, client.Options{APIKey: s.fx.Key})
}

// newClient returns a client of base that polls fast, closed at the end
// of the test.
func newClient(t *testing.T, base string, o client.Options) *client.Client {
	t.Helper()
	if o.PollInterval == 0 {
		o.PollInterval, o.PollMax = 10*time.Millisecond, 50*time.Millisecond
	}
	c, err := client.New(base, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// message is a text message to the fixture's target.
func (s server) message(text string) client.Message {
	return client.Message{BotID: s.fx.Bot.ID, TargetID: s.fx.Target.ID, Content: text}
}

// jobsOfKey returns the jobs the server made for a send's key.
func (s server) jobsOfKey(t *testing.T, key string) []push.Job {
	t.Helper()
	p, err := s.Engine.Jobs().List(context.Background(), push.System(), push.JobFilter{IdempotencyKey: key, Limit: 100})
	if err != nil {
		t.Fatalf("list the jobs of key %q: %v", key, err)
	}
	return p.Items
}

// sent returns the texts the fake Telegram accepted.
func (s server) sent() []string {
	var out []string
	for _, m := range s.Telegram.Messages() {
		out = append(out, m.Text)
	}
	return out
}

// seen is one request a proxy read.
type seen struct {
	Method, Path, Key string
	Body              string
}

// action is what a proxy does with a request.
type action int

const (
	forward         action = iota // pass it on and relay the answer
	forwardAndDrop                // pass it on, let the server answer, then close the connection unanswered
	answer503                     // answer 503 draining with Retry-After: 1, as a restarting Herald does
	answer500                     // answer 500 internal, as Herald does for a bug
	dropUnforwarded               // close the connection without passing the request on
)

// proxy is an HTTP proxy in front of a Herald that reads each request,
// records it, and does what its script says: the network between a client
// and the server, failing on cue.
type proxy struct {
	URL    string // the proxy's API base URL
	target string // the server's root URL
	ln     net.Listener
	script func(n int, r seen) action

	mu    sync.Mutex
	seen  []seen
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newProxy starts a proxy to the server at root (its root URL); script
// picks the action for the n-th request (from 0).
func newProxy(t *testing.T, root string, script func(n int, r seen) action) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return servedProxy(t, ln, root, script)
}

// servedProxy starts a proxy on a listener.
func servedProxy(t *testing.T, ln net.Listener, root string, script func(n int, r seen) action) *proxy {
	p := &proxy{URL: "http://" + ln.Addr().String() + "/api", target: root, ln: ln, script: script, conns: make(map[net.Conn]bool)}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close() // a client's idle keep-alive connection
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// requests returns the requests the proxy read.
func (p *proxy) requests() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.seen...)
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve answers the requests of one connection until it closes.
func (p *proxy) serve(c net.Conn) {
	defer p.wg.Done()
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		r := seen{Method: req.Method, Path: req.URL.Path, Key: req.Header.Get("Idempotency-Key"), Body: string(body)}
		p.mu.Lock()
		n := len(p.seen)
		p.seen = append(p.seen, r)
		p.mu.Unlock()
		switch act := p.script(n, r); act {
		case dropUnforwarded:
			return
		case answer503:
			writeRaw(c, 503, "1", `{"code":503,"message":"the server is shutting down: resubmit with the same Idempotency-Key","error":"draining"}`)
		case answer500:
			writeRaw(c, 500, "", `{"code":500,"message":"internal error: it was logged; retry later with the same Idempotency-Key","error":"internal"}`)
		default:
			resp, err := p.pass(req, body)
			if err != nil {
				return
			}
			if act == forwardAndDrop {
				return
			}
			if err := resp.Write(c); err != nil {
				return
			}
		}
	}
}

// pass sends a request on to the server and reads its whole answer.
func (p *proxy) pass(req *http.Request, body []byte) (*http.Response, error) {
	out, err := http.NewRequest(req.Method, p.target+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = req.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.TransferEncoding = nil
	return resp, nil
}

// writeRaw writes an answer with Herald's headers.
func writeRaw(w io.Writer, status int, retryAfter, body string) {
	h := ""
	if retryAfter != "" {
		h = "Retry-After: " + retryAfter + "\r\n"
	}
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\n%sContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), h, len(body), body)
}
