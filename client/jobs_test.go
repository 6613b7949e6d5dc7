package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestWait checks that Wait polls a pending job until it settles, gives
// up with ctx (returning the job as last seen), and returns an uncertain
// job as settled.
func TestWait(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithLimits(push.Limits{SyncWait: 50 * time.Millisecond}))
	c := s.client(t)
	s.Telegram.Block()
	res, err := c.Send(ctx, s.message("slow"))
	if err != nil || res.Outcome != client.Pending {
		t.Fatalf("send: %+v, %v", res, err)
	}

	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	j, err := c.Wait(short, res.JobID)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || j.Outcome != client.Pending || j.ID != res.JobID {
		t.Fatalf("wait while the platform holds the message: want the pending job and the deadline, got %+v, %v", j, err)
	}

	time.AfterFunc(100*time.Millisecond, s.Telegram.Unblock)
	j, err = c.Wait(ctx, res.JobID)
	if err != nil || j.Outcome != client.Delivered || j.State != client.StateSucceeded || j.Success == nil || !*j.Success || j.FinishedAt.IsZero() {
		t.Fatalf("wait: want the delivered job, got %+v, %v", j, err)
	}

	s.Telegram.DropNext(1)
	u, err := c.Send(ctx, s.message("dropped"))
	if err != nil || u.Outcome != client.Uncertain {
		t.Fatalf("send: %+v, %v", u, err)
	}
	j, err = c.Wait(ctx, u.JobID)
	if err != nil || j.Outcome != client.Uncertain || !j.Uncertain {
		t.Fatalf("wait on an uncertain job: want it returned as settled, got %+v, %v", j, err)
	}

	_, err = c.Wait(ctx, "0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10")
	var he *client.Error
	if !errors.As(err, &he) || he.Status != 404 {
		t.Fatalf("wait on a job that does not exist: want a 404 *client.Error, got %v", err)
	}
}

// TestRecover checks recovery by Idempotency-Key (4.6): a delivered send,
// a pending one, a key never used (ErrNotSent, then the original request
// sent with it), and a batch's key (refused).
func TestRecover(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithLimits(push.Limits{SyncWait: 50 * time.Millisecond}))
	c := s.client(t)
	m := s.message("recover me")
	m.Key = "recover-1"
	sent, err := c.Send(ctx, m)
	if err != nil || sent.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", sent, err)
	}
	r, err := c.Recover(ctx, "recover-1")
	if err != nil || r.Outcome != client.Delivered || r.JobID != sent.JobID || r.Key != "recover-1" || r.Status != "SUCCESS" || r.PlatformIndex == "" {
		t.Fatalf("recover a delivered send: %+v, %v", r, err)
	}

	s.Telegram.Block()
	p := s.message("held")
	p.Key = "recover-2"
	if res, err := c.Send(ctx, p); err != nil || res.Outcome != client.Pending {
		t.Fatalf("send: %+v, %v", res, err)
	}
	r, err = c.Recover(ctx, "recover-2")
	if err != nil || r.Outcome != client.Pending || r.JobID == "" {
		t.Fatalf("recover a pending send: want Pending with its job, got %+v, %v", r, err)
	}
	s.Telegram.Unblock()
	if j, err := c.Wait(ctx, r.JobID); err != nil || j.Outcome != client.Delivered {
		t.Fatalf("wait for the recovered job: %+v, %v", j, err)
	}

	r, err = c.Recover(ctx, "never-sent")
	if !errors.Is(err, client.ErrNotSent) || r.Outcome != client.Unknown || r.Key != "never-sent" {
		t.Fatalf("recover a key never used: want ErrNotSent, got %+v, %v", r, err)
	}
	n := s.message("late")
	n.Key = "never-sent"
	if res, err := c.Send(ctx, n); err != nil || res.Outcome != client.Delivered {
		t.Fatalf("the original request with the original key: %+v, %v", res, err)
	}

	b, err := c.SendBatch(ctx, client.Batch{BotID: s.fx.Bot.ID, TargetIDs: []int64{s.fx.Target.ID}, Content: "batch", Key: "batch-1"})
	if err != nil {
		t.Fatal(err)
	}
	r, err = c.Recover(ctx, b.Key)
	if !errors.Is(err, client.ReasonBatchKey) || r.Outcome != client.Refused {
		t.Fatalf("recover a batch's key: want batch_key, got %+v, %v", r, err)
	}
}
