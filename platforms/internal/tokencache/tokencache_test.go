package tokencache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestEarlyRefresh: a token is refreshed Early before it expires, and a
// short-lived one after half its life, however close to expiry it gets.
func TestEarlyRefresh(t *testing.T) {
	cases := []struct {
		name    string
		life    time.Duration
		advance time.Duration
		refetch bool
	}{
		{"long-lived, well before expiry", 2 * time.Hour, 90 * time.Minute, false},
		{"long-lived, inside the early window", 2 * time.Hour, 2*time.Hour - 4*time.Minute, true},
		{"long-lived, a minute before expiry", 2 * time.Hour, 2*time.Hour - time.Minute, true},
		{"short-lived, before half its life", 4 * time.Minute, time.Minute, false},
		{"short-lived, after half its life", 4 * time.Minute, 2*time.Minute + time.Second, true},
		{"expired", time.Minute, time.Hour, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &clock{t: time.Unix(1_700_000_000, 0)}
			cache := New(Options{Now: clk.now})
			var fetches atomic.Int32
			fetch := func(context.Context) (Token, error) {
				fetches.Add(1)
				return Token{Value: "t", ExpiresAt: clk.now().Add(c.life)}, nil
			}
			if _, err := cache.Get(context.Background(), "k", fetch); err != nil {
				t.Fatal(err)
			}
			clk.add(c.advance)
			if _, err := cache.Get(context.Background(), "k", fetch); err != nil {
				t.Fatal(err)
			}
			if got := fetches.Load() == 2; got != c.refetch {
				t.Fatalf("refetched = %v, want %v", got, c.refetch)
			}
		})
	}
}

func TestSingleFlightAndRetryOnce(t *testing.T) {
	cache := New(Options{})
	var fetches atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (Token, error) {
		n := fetches.Add(1)
		<-release
		return Token{Value: string(rune('a' + n - 1)), ExpiresAt: time.Now().Add(time.Hour)}, nil
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := cache.Get(context.Background(), "k", fetch); err != nil || v != "a" {
				t.Errorf("Get = %q, %v", v, err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches for 10 concurrent callers, want 1", fetches.Load())
	}
	// Do refreshes a refused token once and tries again, and no more.
	errExpired := errors.New("expired")
	var calls []string
	_, err := Do(context.Background(), cache, "k", fetch, func(_ context.Context, tok string) (int, error) {
		calls = append(calls, tok)
		return 0, errExpired
	}, func(err error) bool { return errors.Is(err, errExpired) })
	if !errors.Is(err, errExpired) || len(calls) != 2 || calls[0] != "a" || calls[1] != "b" {
		t.Fatalf("Do: err %v, calls with tokens %v; want two calls, a then b", err, calls)
	}
}
