package push

import (
	"context"
	"sync"
	"testing"
)

// catalogStore is a store of one bot and one target for the catalog: it
// counts its catalog epoch as a store does, and can stop a read of the
// target after it read and before it answers (a slow read).
type catalogStore struct {
	mu     sync.Mutex
	target Target
	epoch  int64
	read   chan struct{} // closed by a stopped read once it has read
	resume chan struct{} // a stopped read answers when it closes
}

func (s *catalogStore) Bot(ctx context.Context, id int64) (Bot, error) {
	return Bot{ID: id}, nil
}

func (s *catalogStore) Target(ctx context.Context, id int64) (Target, error) {
	s.mu.Lock()
	t, read, resume := s.target, s.read, s.resume
	s.read, s.resume = nil, nil
	s.mu.Unlock()
	if read != nil {
		close(read)
		<-resume
	}
	return t, nil
}

func (s *catalogStore) CatalogEpoch(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch, nil
}

// set stores the target's presence and moves the epoch.
func (s *catalogStore) set(p Presence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.target.Presence = p
	s.epoch++
}

// stopNextRead makes the next read of the target stop once it has read;
// it returns a channel closed then, and the function that lets it answer.
func (s *catalogStore) stopNextRead() (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	read, resume := make(chan struct{}), make(chan struct{})
	s.read, s.resume = read, resume
	return read, func() { close(resume) }
}

// TestCatalogChanges: a send that starts once a change is stored finds the
// change, whether it reads while the change is still being written (the
// change is stored, the catalog not yet told), or after a read that began
// before the change answered late. Each case fails when the catalog is
// emptied only after the write, or remembers a read that overlapped it.
func TestCatalogChanges(t *testing.T) {
	ctx := context.Background()
	presence := func(t *testing.T, c *catalog, s *catalogStore) Presence {
		t.Helper()
		got, err := c.target(ctx, s, 7)
		if err != nil {
			t.Fatal(err)
		}
		return got.Presence
	}
	tests := []struct {
		name string
		// slow: a read of the target begins before the change and
		// answers after it.
		slow   bool
		change func(t *testing.T, c *catalog, s *catalogStore)
	}{{
		name: "read while the change is written",
		change: func(t *testing.T, c *catalog, s *catalogStore) {
			err := c.change(func() error {
				s.set(PresenceActive)
				if got := presence(t, c, s); got != PresenceActive {
					t.Errorf("a read after the change was stored found %q, want %q", got, PresenceActive)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "a read begun before the change answers after it",
		slow: true,
		change: func(t *testing.T, c *catalog, s *catalogStore) {
			if err := c.change(func() error { s.set(PresenceActive); return nil }); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "a read begun before another node's change answers after the catalog saw it",
		slow: true,
		change: func(t *testing.T, c *catalog, s *catalogStore) {
			s.set(PresenceActive) // another node's change
			c.lastCheck.Store(1)  // more than catalogRecheck ago
			c.check(ctx, s)       // this node sees the epoch move
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &catalogStore{target: Target{ID: 7, Presence: PresenceGone}}
			var c catalog
			c.init()
			if got := presence(t, &c, s); got != PresenceGone {
				t.Fatalf("first read = %q", got)
			}
			if !tt.slow {
				tt.change(t, &c, s)
			} else {
				c.targets.forget() // the next read reads the store
				read, resume := s.stopNextRead()
				done := make(chan Presence)
				go func() { got, _ := c.target(ctx, s, 7); done <- got.Presence }()
				<-read
				tt.change(t, &c, s)
				resume()
				if got := <-done; got != PresenceGone {
					t.Fatalf("the slow read found %q, want %q (it read before the change)", got, PresenceGone)
				}
			}
			if got := presence(t, &c, s); got != PresenceActive {
				t.Fatalf("a read after the change found %q, want %q", got, PresenceActive)
			}
		})
	}
}
