package push

import (
	"context"
	"time"
)

// Observer receives the engine's events, for metrics. Its methods are
// called on the engine's hot paths (after the store committed what they
// report), so they must be quick and safe for concurrent use. Labels it
// receives are bounded: platform names, job states, outcomes and request
// kinds, never a target, key or account.
type Observer interface {
	// JobSettled reports a job of the platform that reached a final (or,
	// for uncertain, a waiting) state: succeeded, failed, canceled,
	// expired or uncertain. Each job is reported once: an uncertain job
	// resolved later is reported to a ResolutionObserver instead.
	JobSettled(platform string, state State)
	// PlatformCall reports one call to a platform and how long it took.
	// outcome is "ok", or the failed call's Outcome: "definitive",
	// "retryable" or "uncertain".
	PlatformCall(platform string, d time.Duration, outcome string)
	// PointsCharged reports points taken from balances by new sends.
	PointsCharged(n int64)
	// PointsRefunded reports points returned to balances (canceled and
	// expired jobs, and failed ones when the policy refunds them).
	PointsRefunded(n int64)
	// Replay reports a send answered from its Idempotency-Key record.
	Replay(kind RequestKind)
	// RateLimited reports a request refused by the per-key rate limit.
	RateLimited()
	// EventHandled reports an inbound event of a bot of the platform,
	// handled once.
	EventHandled(platform string, kind EventKind)
	// ReceiverFailed reports a failure of a bot's receiver.
	ReceiverFailed(platform string)
}

// ResolutionObserver is an Observer that also hears of uncertain jobs
// resolved as succeeded or failed (Jobs().Resolve), which JobSettled
// counted once already, as uncertain.
type ResolutionObserver interface {
	JobResolved(platform string, state State)
}

// NopObserver is an Observer that ignores every event (the default).
type NopObserver struct{}

// JobSettled implements Observer.
func (NopObserver) JobSettled(string, State) {}

// PlatformCall implements Observer.
func (NopObserver) PlatformCall(string, time.Duration, string) {}

// PointsCharged implements Observer.
func (NopObserver) PointsCharged(int64) {}

// PointsRefunded implements Observer.
func (NopObserver) PointsRefunded(int64) {}

// Replay implements Observer.
func (NopObserver) Replay(RequestKind) {}

// RateLimited implements Observer.
func (NopObserver) RateLimited() {}

// EventHandled implements Observer.
func (NopObserver) EventHandled(string, EventKind) {}

// ReceiverFailed implements Observer.
func (NopObserver) ReceiverFailed(string) {}

// txEvents collects what one transaction settled and refunded, so that
// the observer hears of it only once the transaction committed (and once,
// however often the store retried the transaction).
type txEvents struct {
	settled  []Job // as they stand after their move to a settled state
	resolved []Job // uncertain jobs resolved, as they stand after
	refunded int64
}

// update runs fn in one store transaction and, when it commits, reports
// its events to the observer and hands the jobs it settled to this
// process's waiting requests.
func (e *Engine) update(ctx context.Context, fn func(ctx context.Context, tx Tx, ev *txEvents) error) error {
	var ev txEvents
	err := e.store.Update(ctx, func(ctx context.Context, tx Tx) error {
		ev = txEvents{}
		return fn(ctx, tx, &ev)
	})
	if err != nil {
		return err
	}
	for _, j := range ev.settled {
		e.obs.JobSettled(j.Platform, j.State)
		e.handoff.put(j)
	}
	for _, j := range ev.resolved {
		if ro, ok := e.obs.(ResolutionObserver); ok {
			ro.JobResolved(j.Platform, j.State)
		}
		e.handoff.put(j)
	}
	if ev.refunded > 0 {
		e.obs.PointsRefunded(ev.refunded)
	}
	return nil
}

// Ping checks that the engine's store can be reached (for readiness
// probes).
func (e *Engine) Ping(ctx context.Context) error { return e.store.Ping(ctx) }
