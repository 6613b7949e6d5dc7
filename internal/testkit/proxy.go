package testkit

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a loopback port to a service, and
// can cut them: Cut closes every connection and refuses new ones (the
// service is down, as its clients see it) until Restore.
type Proxy struct {
	tb     testing.TB
	target string
	ln     net.Listener

	tap func(io.Reader) // reads what each client sends; nil: none

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to target (host:port), closed when the test
// ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	return newProxy(tb, target, nil)
}

// NewTapProxy is NewProxy with tap reading what each client sends to the
// service, as the proxy forwards it: tap runs once per connection, on a
// reader that ends with the connection (a protocol's parser that counts
// the client's messages, say). What tap leaves unread is discarded.
func NewTapProxy(tb testing.TB, target string, tap func(from io.Reader)) *Proxy {
	tb.Helper()
	return newProxy(tb, target, tap)
}

func newProxy(tb testing.TB, target string, tap func(io.Reader)) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testkit: proxy listen: %v", err)
	}
	p := &Proxy{tb: tb, target: target, ln: ln, tap: tap, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.conns[up] = struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, up, nil)
		go p.pipe(up, c, p.tap)
	}
}

// pipe copies src to dst until either ends, through tap when it is set.
func (p *Proxy) pipe(dst, src net.Conn, tap func(io.Reader)) {
	defer p.wg.Done()
	var r io.Reader = src
	if tap != nil {
		pr, pw := io.Pipe()
		defer pw.Close()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			tap(pr)
			_, _ = io.Copy(io.Discard, pr)
		}()
		r = io.TeeReader(src, pw)
	}
	_, _ = io.Copy(dst, r)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every open connection and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.Cut()
	p.ln.Close()
	p.wg.Wait()
}
