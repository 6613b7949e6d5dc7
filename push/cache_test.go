package push_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// keyID returns the id of the account's newest key.
func keyID(t *testing.T, h *testkit.Herald, account int64) int64 {
	t.Helper()
	keys, err := h.Engine.Keys().List(ctx, push.System(), push.KeyFilter{AccountID: account})
	if err != nil || len(keys.Items) == 0 {
		t.Fatalf("keys of account %d: %v, %v", account, keys, err)
	}
	return keys.Items[0].ID
}

// statusUpdate is the update that gives an account the status s.
func statusUpdate(s push.AccountStatus) push.AccountUpdate { return push.AccountUpdate{Status: &s} }

// TestAuthenticationCacheSeesChangesAtOnce: a key that authenticated is
// remembered, yet a revocation or a suspension takes effect at the very
// next request, whether this engine made it or another process on the
// same database did; an account activated again is let in again.
func TestAuthenticationCacheSeesChangesAtOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	h := testkit.New(t, testkit.WithDB(db))
	f := h.Seed(t)
	// Another process on the same database (herald admin, another node).
	other := testkit.New(t, testkit.WithDB(db), testkit.WithoutStart())

	auth := func(key string) (push.Principal, error) {
		t.Helper()
		// Twice: the second comes from the cache.
		if _, err := h.Engine.Keys().Authenticate(ctx, key); err != nil {
			return push.Principal{}, err
		}
		return h.Engine.Keys().Authenticate(ctx, key)
	}
	tests := []struct {
		name   string
		by     *testkit.Herald
		change func(e *push.Engine, key int64) error
		reason string // "": the key works after the change
	}{
		{"revoked by another process", other, func(e *push.Engine, key int64) error { _, err := e.Keys().Revoke(ctx, push.System(), key); return err }, "key_revoked"},
		{"revoked by this engine", h, func(e *push.Engine, key int64) error { _, err := e.Keys().Revoke(ctx, push.System(), key); return err }, "key_revoked"},
		{"account suspended by another process", other, func(e *push.Engine, _ int64) error {
			_, err := e.Accounts().Update(ctx, push.System(), f.Account.ID, statusUpdate(push.AccountSuspended))
			return err
		}, "account_suspended"},
		{"account activated again by another process", other, func(e *push.Engine, _ int64) error {
			_, err := e.Accounts().Update(ctx, push.System(), f.Account.ID, statusUpdate(push.AccountActive))
			return err
		}, ""},
		{"account suspended by this engine", h, func(e *push.Engine, _ int64) error {
			_, err := e.Accounts().Update(ctx, push.System(), f.Account.ID, statusUpdate(push.AccountSuspended))
			return err
		}, "account_suspended"},
	}
	for _, tt := range tests {
		if _, err := other.Engine.Accounts().Update(ctx, push.System(), f.Account.ID, statusUpdate(push.AccountActive)); err != nil {
			t.Fatal(err)
		}
		key := h.Key(t, f.Account.ID)
		if p, err := auth(key); err != nil || p.AccountID != f.Account.ID {
			t.Fatalf("%s: before the change: %+v, %v", tt.name, p, err)
		}
		if err := tt.change(tt.by.Engine, keyID(t, h, f.Account.ID)); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		_, err := h.Engine.Keys().Authenticate(ctx, key)
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("%s: the key is refused: %v", tt.name, err)
		case tt.reason != "" && (push.KindOf(err) != push.Forbidden || push.ReasonOf(err) != tt.reason):
			t.Errorf("%s: the next request got %v, want Forbidden %s at once", tt.name, err, tt.reason)
		}
	}
}

// TestAuthRecheckBoundsRevocation: with Options.AuthRecheck, a revocation
// made elsewhere takes effect within the interval (here 300 ms), well
// within the second the scale-out mode promises.
func TestAuthRecheckBoundsRevocation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	h := testkit.New(t, testkit.WithDB(db), testkit.WithEngineOptions(func(o *push.Options) { o.AuthRecheck = 300 * time.Millisecond }))
	f := h.Seed(t)
	other := testkit.New(t, testkit.WithDB(db), testkit.WithoutStart())
	if _, err := h.Engine.Keys().Authenticate(ctx, f.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Engine.Keys().Revoke(ctx, push.System(), keyID(t, h, f.Account.ID)); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		_, err := h.Engine.Keys().Authenticate(ctx, f.Key)
		if push.ReasonOf(err) == "key_revoked" {
			break
		}
		if err != nil {
			t.Fatalf("authenticate: %v", err)
		}
		if time.Since(revoked) > time.Second {
			t.Fatalf("the key revoked elsewhere still works after %s", time.Since(revoked))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReplayAnswers: replays of a delivered send are answered with its job
// and send nothing; a replay with another message is a conflict; a replay
// of an uncertain job shows the job as it is now (resolved meanwhile), not
// as it was; once the record's retention has passed, the key is new again.
func TestReplayAnswers(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	first, err := send(t, h, f, "r1", "hello")
	if err != nil || first.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("send: %+v, %v", first, err)
	}
	for i := 0; i < 3; i++ {
		res, err := send(t, h, f, "r1", "hello")
		if err != nil || !res.Replayed || len(res.Jobs) != 1 || res.Jobs[0].ID != first.Jobs[0].ID || res.Jobs[0].State != push.StateSucceeded {
			t.Fatalf("replay %d: %+v, %v", i, res, err)
		}
		res.Jobs[0].State = push.StateFailed // a caller changing its copy changes nothing for the next
	}
	if _, err := send(t, h, f, "r1", "another message"); push.KindOf(err) != push.Conflict || push.ReasonOf(err) != "idempotency_conflict" {
		t.Fatalf("replay with another message: %v, want Conflict idempotency_conflict", err)
	}
	if n := len(h.Telegram.Messages()); n != 1 {
		t.Fatalf("platform received %d messages, want 1", n)
	}

	h.Telegram.DropNext(1)
	unsure, err := send(t, h, f, "r2", "maybe")
	if err != nil || unsure.Jobs[0].State != push.StateUncertain {
		t.Fatalf("send to a dropping platform: %+v, %v", unsure, err)
	}
	if res, err := send(t, h, f, "r2", "maybe"); err != nil || res.Jobs[0].State != push.StateUncertain {
		t.Fatalf("replay of the uncertain send: %+v, %v", res, err)
	}
	if _, err := h.Engine.Jobs().Resolve(ctx, push.System(), unsure.Jobs[0].ID, push.StateSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	if res, err := send(t, h, f, "r2", "maybe"); err != nil || res.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("replay after the job was resolved: %+v, %v, want it succeeded", res, err)
	}

	h.Clock.Advance(31 * 24 * time.Hour)
	if err := h.Engine.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := send(t, h, f, "r1", "a new message")
	if err != nil || res.Replayed || res.Jobs[0].ID == first.Jobs[0].ID {
		t.Fatalf("send with the key after its retention: %+v, %v, want a new send", res, err)
	}
}

// TestReplayWhenThePlanFails: a resubmission is not read before it is
// written, yet it is answered from its record even when the request could
// no longer be planned (here the server no longer runs the bot's platform,
// and the reply is not in this engine's memory); a request under a new key
// gets the refusal, and nothing is written for either.
func TestReplayWhenThePlanFails(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	h := testkit.New(t, testkit.WithDB(db))
	f := h.Seed(t)
	first, err := send(t, h, f, "plan-1", "hello")
	if err != nil || first.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("send: %+v, %v", first, err)
	}
	other := testkit.New(t, testkit.WithDB(db), testkit.WithoutStart(),
		testkit.WithEngineOptions(func(o *push.Options) { delete(o.Platforms, "telegram") }))
	res, err := send(t, other, f, "plan-1", "hello")
	if err != nil || !res.Replayed || len(res.Jobs) != 1 || res.Jobs[0].ID != first.Jobs[0].ID || res.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("replay on a server without the platform: %+v, %v", res, err)
	}
	if _, err := send(t, other, f, "plan-2", "hello"); push.ReasonOf(err) != "platform_unavailable" {
		t.Fatalf("a new key on a server without the platform: %v, want platform_unavailable", err)
	}
	if k, err := other.Engine.Jobs().ByIdempotencyKey(ctx, push.AccountPrincipal(f.Account.ID), "plan-2"); push.KindOf(err) != push.NotFound {
		t.Fatalf("the refused request left a record: %+v, %v", k, err)
	}
	if n := h.Telegram.Requests(); n != 1 {
		t.Fatalf("platform saw %d requests, want 1", n)
	}
}
