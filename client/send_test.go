package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestSendOutcomes sends single messages that end each way a real server
// can answer, and checks the outcome the client reads, and that nothing
// but a delivered message reads as Delivered.
func TestSendOutcomes(t *testing.T) {
	ctx := context.Background()
	type got struct {
		Outcome    client.Outcome
		HTTPStatus int
		Status     string
		Reason     client.Reason
		Sent       int // messages the fake platform accepted
	}
	for _, tc := range []struct {
		name    string
		opts    []testkit.Option
		prepare func(t *testing.T, s server, m *client.Message)
		want    got
		detail  string
	}{
		{
			name: "delivered: 200, code 0, status SUCCESS",
			want: got{Outcome: client.Delivered, HTTPStatus: 200, Status: "SUCCESS", Sent: 1},
		},
		{
			name: "pending: 202 after the sync wait, pending=true",
			opts: []testkit.Option{testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond})},
			prepare: func(t *testing.T, s server, _ *client.Message) {
				s.Telegram.Block()
				t.Cleanup(s.Telegram.Unblock)
			},
			// The job is queued or running (its status says which): either way pending.
			want:   got{Outcome: client.Pending, HTTPStatus: 202},
			detail: "still being sent",
		},
		{
			name: "uncertain: the platform's connection broke after the request was written",
			prepare: func(t *testing.T, s server, _ *client.Message) {
				s.Telegram.DropNext(1)
			},
			want: got{Outcome: client.Uncertain, HTTPStatus: 202, Status: "UNCERTAIN"},
		},
		{
			name: "failed: the platform refused it (500 platform_failed with the record)",
			prepare: func(t *testing.T, s server, _ *client.Message) {
				s.Telegram.Fail(fake.TelegramFault{Status: 400, Description: "Bad Request: chat not found"})
			},
			want:   got{Outcome: client.Failed, HTTPStatus: 500, Status: "FAILED"},
			detail: "chat not found",
		},
		{
			name: "refused: a bot of another account is 404",
			prepare: func(t *testing.T, s server, m *client.Message) {
				other := s.Account(t, "other")
				m.BotID = s.TelegramBot(t, other.ID).ID
			},
			want: got{Outcome: client.Refused, HTTPStatus: 404, Reason: client.ReasonBotNotFound},
		},
		{
			name: "refused: insufficient points is 400",
			opts: []testkit.Option{testkit.WithPoints(push.Points{Enabled: true})},
			prepare: func(t *testing.T, s server, _ *client.Message) {
				if _, err := s.Engine.Ledger().SetBalance(context.Background(), push.System(), s.fx.Account.ID, 0); err != nil {
					t.Fatal(err)
				}
			},
			want: got{Outcome: client.Refused, HTTPStatus: 400, Reason: client.ReasonInsufficientPoints},
		},
		{
			name: "refused: text over the limit is 400",
			prepare: func(t *testing.T, s server, m *client.Message) {
				m.Content = strings.Repeat("x", 2001)
			},
			want: got{Outcome: client.Refused, HTTPStatus: 400, Reason: client.ReasonContentTooLong},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.opts...)
			c := s.client(t)
			m := s.message("hello " + tc.name)
			if tc.prepare != nil {
				tc.prepare(t, s, &m)
			}
			res, err := c.Send(ctx, m)
			g := got{Outcome: res.Outcome, HTTPStatus: res.HTTPStatus, Status: res.Status, Reason: client.ReasonOf(err), Sent: len(s.sent())}
			if tc.want.Outcome == client.Pending && (g.Status == "QUEUED" || g.Status == "RUNNING") {
				g.Status = ""
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Fatalf("send (-want +got):\n%s\nresult %+v, error %v", diff, res, err)
			}
			wantJobs := 1
			if tc.want.Outcome == client.Refused {
				wantJobs = 0
			}
			if res.Key == "" || len(s.jobsOfKey(t, res.Key)) != wantJobs {
				t.Fatalf("key %q: want the server's jobs under the key the result names (none for a refusal)", res.Key)
			}
			switch {
			case tc.want.Outcome == client.Refused:
				var he *client.Error
				if !errors.As(err, &he) || !he.Refused() || he.Message == "" || !errors.Is(err, tc.want.Reason) {
					t.Fatalf("a refusal's error is a *client.Error with its status, reason and message: %#v", err)
				}
			case err != nil:
				t.Fatalf("the server took the message: want no error, got %v", err)
			case res.JobID == "" || res.MessageID == 0:
				t.Fatalf("want the job and record ids in %+v", res)
			}
			if !strings.Contains(res.Detail, tc.detail) {
				t.Fatalf("detail %q, want it to say %q", res.Detail, tc.detail)
			}
		})
	}
}

// TestSendKey checks that each Send makes its own Idempotency-Key unless
// given one, and that a given key replays the first send instead of
// sending again.
func TestSendKey(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c := s.client(t)
	a, err := c.Send(ctx, s.message("one"))
	if err != nil || a.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", a, err)
	}
	b, err := c.Send(ctx, s.message("one"))
	if err != nil || b.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", b, err)
	}
	if a.Key == b.Key || a.JobID == b.JobID {
		t.Fatalf("two Sends without a key are two logical sends: keys %q and %q, jobs %s and %s", a.Key, b.Key, a.JobID, b.JobID)
	}
	m := s.message("deploy 42")
	m.Key = "deploy-42"
	first, err := c.Send(ctx, m)
	if err != nil || first.Key != "deploy-42" || first.Replayed {
		t.Fatalf("send with a key: %+v, %v", first, err)
	}
	again, err := c.SendCompat(ctx, m) // the other endpoint, the same kind of send
	if err != nil || !again.Replayed || again.JobID != first.JobID || again.Outcome != client.Delivered {
		t.Fatalf("the same key again: want the first send's job replayed, got %+v, %v", again, err)
	}
	if got := s.sent(); !cmp.Equal(got, []string{"one", "one", "deploy 42"}) {
		t.Fatalf("the platform received %q", got)
	}
	m.Content = "another message"
	_, err = c.Send(ctx, m)
	if !errors.Is(err, client.ReasonIdempotencyConflict) {
		t.Fatalf("another message under a used key: want idempotency_conflict, got %v", err)
	}
}

// TestReplayOfCanceled checks that a replay of a send whose job was
// canceled reads as Failed (200 with status CANCELED): never delivered.
func TestReplayOfCanceled(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}))
	c := s.client(t)
	m := s.message("never")
	m.Key = "cancel-me"
	res, err := c.Send(ctx, m)
	if err != nil || res.Outcome != client.Pending {
		t.Fatalf("send to a server without workers: %+v, %v", res, err)
	}
	j, err := c.Cancel(ctx, res.JobID)
	if err != nil || j.State != client.StateCanceled || j.Outcome != client.Failed {
		t.Fatalf("cancel: %+v, %v", j, err)
	}
	if _, err := c.Cancel(ctx, res.JobID); !errors.Is(err, client.ReasonJobNotQueued) {
		t.Fatalf("cancel again: want job_not_queued, got %v", err)
	}
	again, err := c.Send(ctx, m)
	if err != nil || again.Outcome != client.Failed || again.Status != "CANCELED" || !again.Replayed || again.HTTPStatus != 200 {
		t.Fatalf("replay of a canceled send: want Failed (CANCELED), got %+v, %v", again, err)
	}
}
