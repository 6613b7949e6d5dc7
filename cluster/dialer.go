package cluster

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Before each command, go-redis's pool probes the connection it takes
// for whether the server closed it (a non-blocking peek, one system call).
// A node sends three to four Redis commands per push, so the probes cost
// as much as a tenth of a node's CPU. The probe matters for a connection
// that sat idle (Redis restarted, or closed it after its timeout), not for
// one that carried a reply a moment ago: NewDialer's connections skip it
// while they are in steady use.

// probeAfter is how long a connection must have been idle before the
// pool's probe runs again.
const probeAfter = time.Second

// NewDialer returns opt's dialer (go-redis's own when opt has none) with
// connections that skip the pool's liveness probe while they were read
// from or written to within probeAfter. A command on a connection the
// server closed meanwhile fails as it would without the probe, and
// go-redis retries it on another connection.
func NewDialer(opt *redis.Options) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := opt.Dialer
	if dial == nil {
		dial = redis.NewDialer(opt)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc, ok := c.(syscall.Conn)
		if !ok {
			return c, nil // TLS: the pool does not probe it
		}
		return &steadyConn{Conn: c, sys: sc}, nil
	}
}

// steadyConn is a connection that remembers when it was last used.
type steadyConn struct {
	net.Conn
	sys  syscall.Conn
	used atomic.Int64 // Unix nanoseconds of the last read or write's end
}

func (c *steadyConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == nil {
		c.used.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *steadyConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err == nil {
		c.used.Store(time.Now().UnixNano())
	}
	return n, err
}

// SyscallConn implements syscall.Conn for the pool's probe.
func (c *steadyConn) SyscallConn() (syscall.RawConn, error) {
	raw, err := c.sys.SyscallConn()
	if err != nil {
		return nil, err
	}
	return steadyRaw{raw, c}, nil
}

// steadyRaw is a connection's raw access whose Read, the probe, does
// nothing while the connection is in steady use.
type steadyRaw struct {
	syscall.RawConn
	c *steadyConn
}

func (r steadyRaw) Read(f func(fd uintptr) bool) error {
	if time.Since(time.Unix(0, r.c.used.Load())) < probeAfter {
		return nil
	}
	return r.RawConn.Read(f)
}
