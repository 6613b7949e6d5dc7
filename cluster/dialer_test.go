package cluster_test

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/heraldpush/herald/cluster"
	"github.com/redis/go-redis/v9"
)

// probeCounter is a TCP connection that counts the reads of its raw
// access: go-redis's pool probes a connection it takes that way.
type probeCounter struct {
	*net.TCPConn
	probes *atomic.Int64
}

func (c probeCounter) SyscallConn() (syscall.RawConn, error) {
	raw, err := c.TCPConn.SyscallConn()
	return countingRaw{raw, c.probes}, err
}

type countingRaw struct {
	syscall.RawConn
	probes *atomic.Int64
}

func (r countingRaw) Read(f func(fd uintptr) bool) error {
	r.probes.Add(1)
	return r.RawConn.Read(f)
}

// countingDial dials TCP connections whose probes count into probes.
func countingDial(probes *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return probeCounter{c.(*net.TCPConn), probes}, nil
	}
}

// TestDialerSkipsProbesOfBusyConnections: go-redis probes the connection
// before every command (the control), and NewDialer's connections are not
// probed while they carry commands one after another (the one connection
// of the pool may be probed once, new).
func TestDialerSkipsProbesOfBusyConnections(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		const commands = 50
		run := func(t *testing.T, steady bool) int64 {
			var probes atomic.Int64
			opt := &redis.Options{Addr: addr, PoolSize: 1, Dialer: countingDial(&probes)}
			if steady {
				opt.Dialer = cluster.NewDialer(opt)
			}
			rdb := redis.NewClient(opt)
			defer rdb.Close()
			for i := range commands {
				if err := rdb.Set(context.Background(), "herald-dialer-test", i, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			return probes.Load()
		}
		if n := run(t, false); n < commands-1 {
			t.Fatalf("go-redis probed its connection %d times for %d commands: the control does not show the probe", n, commands)
		}
		if n := run(t, true); n > 1 {
			t.Errorf("a connection in steady use was probed %d times for %d commands, want at most once, when it was new", n, commands)
		}
	})
}

// TestDialerProbesIdleConnections: a connection of NewDialer's that was
// never used since it was dialed is probed, one written to a moment ago
// is not.
func TestDialerProbesIdleConnections(t *testing.T) {
	var probes atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	dial := cluster.NewDialer(&redis.Options{Dialer: countingDial(&probes)})
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_ = raw.Read(func(uintptr) bool { return true })
	if probes.Load() != 1 {
		t.Errorf("a connection never used was not probed")
	}
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	_ = raw.Read(func(uintptr) bool { return true })
	if probes.Load() != 1 {
		t.Errorf("a connection written to a moment ago was probed")
	}
}
