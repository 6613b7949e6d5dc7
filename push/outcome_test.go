package push_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// sleepyStore is the engine's real store, whose writes fail as a database
// that is down does (Unavailable) while it sleeps, as asynq's testbroker
// wraps its broker.
type sleepyStore struct {
	push.Store
	asleep atomic.Bool
}

func (s *sleepyStore) Update(ctx context.Context, fn func(ctx context.Context, tx push.Tx) error) error {
	if s.asleep.Load() {
		return &push.Error{Kind: push.Unavailable, Reason: "database_unavailable", RetryAfter: 5 * time.Second, Message: "the database is unreachable"}
	}
	return s.Store.Update(ctx, fn)
}

// TestOutcomeRecordedAfterOutage: the database goes away while the
// platform accepts a message. The worker knows the answer and keeps
// trying to record it until the database is back, also when the engine is
// stopped meanwhile (the drain waits for it): the job ends succeeded,
// sent once, never uncertain.
func TestOutcomeRecordedAfterOutage(t *testing.T) {
	for _, stop := range []bool{false, true} {
		name := "outage"
		if stop {
			name = "outage during the drain"
		}
		t.Run(name, func(t *testing.T) {
			store := &sleepyStore{}
			h := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond}),
				testkit.WithEngineOptions(func(o *push.Options) { store.Store = o.Store; o.Store = store }))
			f := h.Seed(t)
			h.Telegram.SetDelay(300 * time.Millisecond)
			res, err := send(t, h, f, "", "during the outage")
			if err != nil {
				t.Fatal(err)
			}
			id := res.Jobs[0].ID
			<-h.Telegram.Arrived()
			store.asleep.Store(true) // the platform answers while the database is away
			stopped := make(chan error, 1)
			if stop {
				go func() {
					sctx, cancel := context.WithTimeout(ctx, time.Second)
					defer cancel()
					stopped <- h.Engine.Stop(sctx)
				}()
			}
			time.Sleep(2 * time.Second)
			if stop {
				select {
				case err := <-stopped:
					t.Fatalf("the engine stopped (%v) with the job's outcome not recorded", err)
				default:
				}
			}
			store.asleep.Store(false)
			if stop {
				select {
				case <-stopped:
				case <-time.After(10 * time.Second):
					t.Fatal("the engine did not stop once the outcome could be recorded")
				}
			}
			j, err := h.Store.Job(ctx, id)
			for deadline := time.Now().Add(5 * time.Second); err == nil && !j.State.Settled() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				j, err = h.Store.Job(ctx, id)
			}
			if err != nil || j.State != push.StateSucceeded || j.Attempts != 1 || j.PlatformIndex == "" {
				t.Fatalf("job after the outage: %s, %d attempts, platformIndex %q, error %q (%v); want succeeded after one call", j.State, j.Attempts, j.PlatformIndex, j.Error, err)
			}
			if n := h.Telegram.Requests(); n != 1 {
				t.Fatalf("the platform saw %d sends, want 1", n)
			}
		})
	}
}
