package client_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// outcomes returns the items' outcomes by target, for comparing.
func outcomes(items []client.Item) map[int64]client.Outcome {
	out := make(map[int64]client.Outcome)
	for _, it := range items {
		out[it.TargetID] = it.Outcome
	}
	return out
}

// TestBatchItems sends batches whose items end differently, through both
// batch endpoints, and checks each item's outcome: a batch has no single
// outcome (rule 6).
func TestBatchItems(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c := s.client(t)
	ok := s.Target(t, s.fx.Bot.ID, push.TargetUser, "")
	// A chat the fake Telegram does not know: the platform refuses it
	// ("chat not found").
	unknown, err := s.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: s.fx.Bot.ID, Type: push.TargetUser, Address: "999999999"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]client.Outcome{s.fx.Target.ID: client.Delivered, ok.ID: client.Delivered, unknown.ID: client.Failed}

	b, err := c.SendBatch(ctx, client.Batch{BotID: s.fx.Bot.ID, TargetIDs: []int64{s.fx.Target.ID, ok.ID, unknown.ID}, Content: "batch"})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if diff := cmp.Diff(want, outcomes(b.Items)); diff != "" {
		t.Fatalf("batch items (-want +got):\n%s", diff)
	}
	if b.Count(client.Delivered) != 2 || b.Count(client.Failed) != 1 || !b.Settled() || b.Key == "" || b.Summary == "" {
		t.Fatalf("batch result %+v", b)
	}

	other := s.TelegramBot(t, s.fx.Account.ID)
	third := s.Target(t, other.ID, push.TargetGroup, "")
	m, err := c.SendMulti(ctx, client.Multi{Content: "multi", Groups: []client.Group{
		{BotID: s.fx.Bot.ID, TargetIDs: []int64{s.fx.Target.ID, unknown.ID}},
		{BotID: other.ID, TargetIDs: []int64{third.ID}},
	}})
	if err != nil {
		t.Fatalf("multi: %v", err)
	}
	want = map[int64]client.Outcome{s.fx.Target.ID: client.Delivered, unknown.ID: client.Failed, third.ID: client.Delivered}
	if diff := cmp.Diff(want, outcomes(m.Items)); diff != "" {
		t.Fatalf("multi items (-want +got):\n%s", diff)
	}
	for _, it := range m.Items {
		if it.JobID == "" || it.BotID == 0 {
			t.Fatalf("a multi item names its bot and job: %+v", it)
		}
	}

	// The same key and request again: the same jobs, nothing sent again.
	again, err := c.SendBatch(ctx, client.Batch{BotID: s.fx.Bot.ID, TargetIDs: []int64{s.fx.Target.ID, ok.ID, unknown.ID}, Content: "batch", Key: b.Key})
	if err != nil || !again.Replayed || again.Items[0].JobID != b.Items[0].JobID {
		t.Fatalf("replayed batch: %+v, %v", again, err)
	}
	if got := len(s.sent()); got != 4 {
		t.Fatalf("the platform received %d messages, want 4 (2 of the batch, 2 of the multi)", got)
	}

	// A refused batch has no items, and an error.
	_, err = c.SendBatch(ctx, client.Batch{BotID: s.fx.Bot.ID, TargetIDs: make([]int64, 51), Content: "too many"})
	if !errors.Is(err, client.ReasonTooManyTargets) {
		t.Fatalf("51 targets: want too_many_targets, got %v", err)
	}
}

// TestBatchPendingAndUncertain checks that the items still sending after
// the sync wait are Pending, an item whose platform call broke after it
// was written is Uncertain, and that waiting on the pending items' jobs
// gives their final outcome.
func TestBatchPendingAndUncertain(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithLimits(push.Limits{SyncWait: 300 * time.Millisecond}), testkit.WithWorkers(1))
	c := s.client(t)
	second := s.Target(t, s.fx.Bot.ID, push.TargetUser, "")
	s.Telegram.DropNext(1)
	b, err := c.SendBatch(ctx, client.Batch{BotID: s.fx.Bot.ID, TargetIDs: []int64{s.fx.Target.ID, second.ID}, Content: "one drops"})
	if err != nil {
		t.Fatal(err)
	}
	if b.HTTPStatus != 200 || b.Count(client.Uncertain) != 1 || b.Count(client.Delivered) != 1 || !b.Settled() {
		t.Fatalf("one item's platform call broke after it was written: want 1 uncertain and 1 delivered, got %+v", b)
	}

	s.Telegram.DropNext(1) // the first send to reach the platform
	s.Telegram.SetDelay(400 * time.Millisecond)
	b, err = c.SendBatch(ctx, client.Batch{BotID: s.fx.Bot.ID, TargetIDs: []int64{s.fx.Target.ID, second.ID}, Content: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	var got []client.Outcome
	for _, it := range b.Items {
		got = append(got, it.Outcome)
	}
	if b.HTTPStatus != 202 || b.Settled() || b.Count(client.Delivered) != 0 {
		t.Fatalf("batch still sending after the sync wait: want 202 with no item delivered, got %d %v", b.HTTPStatus, got)
	}
	s.Telegram.SetDelay(0)
	var final []string
	for _, it := range b.Items {
		j, err := c.Wait(ctx, it.JobID)
		if err != nil {
			t.Fatal(err)
		}
		final = append(final, j.Outcome.String())
	}
	sort.Strings(final)
	if diff := cmp.Diff([]string{"delivered", "uncertain"}, final); diff != "" {
		t.Fatalf("the items' jobs settled (-want +got):\n%s", diff)
	}
}
