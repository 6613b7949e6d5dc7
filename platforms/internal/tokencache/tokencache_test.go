package tokencache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func TestGetCachesAndRefreshesEarly(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := New(Options{Now: clk.Now, Early: 5 * time.Minute})
	var fetches atomic.Int32
	fetch := func(ctx context.Context) (Token, error) {
		n := fetches.Add(1)
		return Token{Value: fmt.Sprintf("t%d", n), ExpiresAt: clk.Now().Add(2 * time.Hour)}, nil
	}
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if v, err := c.Get(ctx, "k", fetch); err != nil || v != "t1" {
			t.Fatalf("Get = %q, %v; want t1", v, err)
		}
	}
	clk.Advance(2*time.Hour - 6*time.Minute)
	if v, _ := c.Get(ctx, "k", fetch); v != "t1" {
		t.Fatalf("6 minutes before expiry: %q, want the cached t1", v)
	}
	clk.Advance(2 * time.Minute) // 4 minutes left: inside the early window
	if v, _ := c.Get(ctx, "k", fetch); v != "t2" {
		t.Fatalf("4 minutes before expiry: %q, want a fresh t2", v)
	}
	if v, _ := c.Get(ctx, "other", fetch); v != "t3" {
		t.Fatalf("another key shares a token: %q", v)
	}
}

func TestGetIsSingleFlight(t *testing.T) {
	c := New(Options{})
	var fetches atomic.Int32
	release := make(chan struct{})
	fetch := func(ctx context.Context) (Token, error) {
		fetches.Add(1)
		<-release
		return Token{Value: "tok", ExpiresAt: time.Now().Add(time.Hour)}, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get(context.Background(), "k", fetch)
			if err == nil && v != "tok" {
				err = fmt.Errorf("got %q", v)
			}
			errs <- err
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches for 50 concurrent callers, want 1", fetches.Load())
	}
}

// TestGetWaitCutShort: a caller whose context ends while another fetches
// the token gets a retryable failure that sent nothing, not a bare
// context error (which the engine would take as uncertain).
func TestGetWaitCutShort(t *testing.T) {
	c := New(Options{})
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	go func() {
		_, _ = c.Get(context.Background(), "k", func(context.Context) (Token, error) {
			close(started)
			<-release
			return Token{Value: "tok", ExpiresAt: time.Now().Add(time.Hour)}, nil
		})
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Get(ctx, "k", func(context.Context) (Token, error) {
		t.Error("a second fetch while the first is under way")
		return Token{}, nil
	})
	var se *push.SendError
	if !errors.As(err, &se) || se.Outcome != push.OutcomeRetryable || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(se.Message, "nothing was sent") {
		t.Fatalf("waiting cut short: %#v, want a retryable failure wrapping the deadline", err)
	}
}

func TestGetFailureIsSharedAndNotCached(t *testing.T) {
	c := New(Options{})
	fail := true
	fetch := func(ctx context.Context) (Token, error) {
		if fail {
			return Token{}, errors.New("bad secret")
		}
		return Token{Value: "ok", ExpiresAt: time.Now().Add(time.Hour)}, nil
	}
	if _, err := c.Get(context.Background(), "k", fetch); err == nil {
		t.Fatal("a failed fetch gave a token")
	}
	fail = false
	if v, err := c.Get(context.Background(), "k", fetch); err != nil || v != "ok" {
		t.Fatalf("after a failure: %q, %v", v, err)
	}
}

func TestInvalidateKeepsNewerToken(t *testing.T) {
	c := New(Options{})
	n := 0
	fetch := func(ctx context.Context) (Token, error) {
		n++
		return Token{Value: fmt.Sprintf("t%d", n), ExpiresAt: time.Now().Add(time.Hour)}, nil
	}
	_, _ = c.Get(context.Background(), "k", fetch)
	c.Invalidate("k", "t1")
	_, _ = c.Get(context.Background(), "k", fetch) // t2
	c.Invalidate("k", "t1")                        // a late report about t1 must not drop t2
	if v, _ := c.Get(context.Background(), "k", fetch); v != "t2" {
		t.Fatalf("got %q, want t2 kept", v)
	}
}

func TestKeyHidesCredentials(t *testing.T) {
	k := Key("app", "secret")
	if k == Key("app", "secret2") || k == Key("apps", "ecret") || len(k) != 64 {
		t.Fatalf("Key collides or has the wrong form: %s", k)
	}
}
