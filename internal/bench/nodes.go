package bench

import (
	"context"
	"fmt"
	"time"
)

// nodes are an embedded run's processes: the herald serve nodes (the
// first of them the one profiled) and the herald worker nodes after them.
type nodes []*Server

// apis returns the serve nodes' API base URLs, to spread the load over.
func (ns nodes) apis() []string {
	var out []string
	for _, s := range ns {
		if s.URL != "" {
			out = append(out, s.URL)
		}
	}
	return out
}

// sample reads every node and returns their sum: CPU, memory and
// allocations are the installation's in all. Herald's own counts of its
// PostgreSQL and Redis calls are summed when every node serves them (a
// node without /metrics makes them -1, not counted, and the databases'
// own counts stand alone).
func (ns nodes) sample(ctx context.Context) (procSample, error) {
	var sum procSample
	for i, s := range ns {
		p, err := s.sample(ctx)
		if err != nil {
			return sum, fmt.Errorf("node %d: %w", i+1, err)
		}
		if i == 0 {
			sum = p
			continue
		}
		sum.At = p.At
		sum.CPU += p.CPU
		sum.RSS += p.RSS
		sum.PeakRSS += p.PeakRSS
		sum.Threads += p.Threads
		sum.Mallocs += p.Mallocs
		sum.AllocBytes += p.AllocBytes
		sum.HeapInuse += p.HeapInuse
		sum.GoSys += p.GoSys
		for _, c := range [...]struct {
			to *float64
			v  float64
		}{
			{&sum.DBStatements, p.DBStatements}, {&sum.DBCommits, p.DBCommits},
			{&sum.RedisCommands, p.RedisCommands}, {&sum.RedisRoundTrips, p.RedisRoundTrips},
		} {
			if *c.to < 0 || c.v < 0 {
				*c.to = -1
			} else {
				*c.to += c.v
			}
		}
	}
	return sum, nil
}

// rss returns the nodes' resident sets in all, in MiB.
func (ns nodes) rss() (float64, error) {
	var sum int64
	for _, s := range ns {
		p, err := readProc(s.Pid())
		if err != nil {
			return 0, err
		}
		sum += p.RSS
	}
	return mib(sum), nil
}

// exited returns the first node that has ended, or nil.
func (ns nodes) exited() *Server {
	for _, s := range ns {
		if s.Exited() {
			return s
		}
	}
	return nil
}

// logTail returns the end of the first node's log.
func (ns nodes) logTail() string {
	if len(ns) == 0 {
		return ""
	}
	return ns[0].logTail()
}

// stop ends every node together (each drains its own sends).
func (ns nodes) stop(timeout time.Duration) {
	done := make(chan struct{}, len(ns))
	for _, s := range ns {
		go func() {
			_ = s.Stop(timeout)
			done <- struct{}{}
		}()
	}
	for range ns {
		<-done
	}
}
