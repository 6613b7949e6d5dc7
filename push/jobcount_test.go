package push_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestJobCount: Count tells how many of an account's jobs made since a
// time are in each state, exactly, however many more than a page there
// are; only the account's own, and a member only its own account's.
func TestJobCount(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond, BacklogPerBot: 2000, BacklogTotal: 4000}))
	f := h.Seed(t)
	other := h.Seed(t)
	p := push.AccountPrincipal(f.Account.ID)
	const queued, canceled = push.MaxPageSize + 7, 3
	for i := range queued + canceled {
		res, err := send(t, h, f, "", "counted")
		if err != nil {
			t.Fatal(err)
		}
		if i < canceled {
			if _, err := h.Engine.Jobs().Cancel(ctx, p, res.Jobs[0].ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := send(t, h, other, "", "another account's"); err != nil {
		t.Fatal(err)
	}
	since := h.Clock.Now().Add(-time.Hour)
	got, err := h.Engine.Jobs().Count(ctx, p, push.JobCountFilter{AccountID: f.Account.ID, Since: since})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[push.State]int{push.StateQueued: queued, push.StateCanceled: canceled}, got); diff != "" {
		t.Fatalf("counts (-want +got):\n%s", diff)
	}

	// Only the jobs made since the time.
	h.Clock.Advance(24 * time.Hour)
	for range 2 {
		if _, err := send(t, h, f, "", "tomorrow"); err != nil {
			t.Fatal(err)
		}
	}
	got, err = h.Engine.Jobs().Count(ctx, push.System(), push.JobCountFilter{AccountID: f.Account.ID, Since: h.Clock.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[push.State]int{push.StateQueued: 2}, got); diff != "" {
		t.Fatalf("counts since an hour ago (-want +got):\n%s", diff)
	}

	// A member counts its own account only.
	if _, err := h.Engine.Jobs().Count(ctx, p, push.JobCountFilter{AccountID: other.Account.ID, Since: since}); push.KindOf(err) != push.NotFound {
		t.Fatalf("a member counting another account's jobs: %v, want NotFound", err)
	}
}
