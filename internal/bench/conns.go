package bench

import (
	"net"
	"sync"
	"time"
)

// connSet tracks open connections so that the end of a run reaches every
// one: the load's (whose requests still waiting are cut) and the fake
// platform's (which are closed). Once ended it refuses new ones.
type connSet struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	ended bool
}

// add records c; false once the set has ended.
func (s *connSet) add(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	if s.conns == nil {
		s.conns = make(map[net.Conn]struct{})
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *connSet) remove(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// end refuses new connections and applies f to each one open.
func (s *connSet) end(f func(net.Conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for c := range s.conns {
		f(c)
	}
}

// cut ends the set and the requests waiting on its connections.
func (s *connSet) cut() { s.end(func(c net.Conn) { _ = c.SetDeadline(time.Unix(1, 0)) }) }

func (s *connSet) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}
