package push

import (
	"context"
	"sync"
	"testing"
	"time"
)

type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestLocalRateLimiter(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := NewLocalRateLimiter(clock)
	for i := 1; i <= 120; i++ {
		d, _ := l.Allow(ctx, "k", 120, time.Minute)
		if !d.Allowed {
			t.Fatalf("request %d refused", i)
		}
		if d.Remaining != 120-i {
			t.Fatalf("request %d: remaining %d, want %d", i, d.Remaining, 120-i)
		}
	}
	d, _ := l.Allow(ctx, "k", 120, time.Minute)
	if d.Allowed {
		t.Fatal("request 121 admitted")
	}
	if d.RetryAfter <= 0 || d.RetryAfter > 500*time.Millisecond {
		t.Fatalf("retry after %s, want (0, 500ms]", d.RetryAfter)
	}
	if other, _ := l.Allow(ctx, "other", 120, time.Minute); !other.Allowed {
		t.Fatal("another key was refused: keys must be independent")
	}
	clock.Advance(d.RetryAfter)
	if d, _ := l.Allow(ctx, "k", 120, time.Minute); !d.Allowed {
		t.Fatal("refused after waiting RetryAfter")
	}
	if d, _ := l.Allow(ctx, "k", 120, time.Minute); d.Allowed {
		t.Fatal("a second request admitted without waiting")
	}
	clock.Advance(time.Minute)
	for i := 0; i < 120; i++ {
		if d, _ := l.Allow(ctx, "k", 120, time.Minute); !d.Allowed {
			t.Fatalf("after a full minute, request %d refused", i+1)
		}
	}
}

func TestLocalNotifier(t *testing.T) {
	n := NewLocalNotifier()
	ch, stop := n.Subscribe([]string{"a", "b"})
	other, stopOther := n.Subscribe([]string{"b"})
	defer stopOther()
	_ = n.Notify(context.Background(), "b", "c")
	if got := <-ch; got != "b" {
		t.Fatalf("got %q, want b", got)
	}
	if got := <-other; got != "b" {
		t.Fatalf("other got %q, want b", got)
	}
	stop()
	stop() // twice is harmless
	_ = n.Notify(context.Background(), "a")
	select {
	case id := <-ch:
		t.Fatalf("got %q after unsubscribing", id)
	default:
	}
	if len(n.subs["a"]) != 0 {
		t.Fatal("subscription left behind")
	}
	// The other subscription to b still hears of it, and only it.
	_ = n.Notify(context.Background(), "b")
	if got := <-other; got != "b" {
		t.Fatalf("other got %q after the first ended, want b", got)
	}
	select {
	case id := <-ch:
		t.Fatalf("the ended subscription got %q", id)
	default:
	}
	stopOther()
	if len(n.subs) != 0 {
		t.Fatalf("subscriptions left behind: %v", n.subs)
	}
}
