package testkit

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

// PlatformBot creates a bot of the account on any platform; config is
// marshalled as JSON unless it is a string or []byte.
func (h *Herald) PlatformBot(accountID int64, platform string, config any) push.Bot {
	h.T.Helper()
	var raw []byte
	switch c := config.(type) {
	case string:
		raw = []byte(c)
	case []byte:
		raw = c
	default:
		var err error
		if raw, err = json.Marshal(c); err != nil {
			h.T.Fatalf("testkit: marshal %s config: %v", platform, err)
		}
	}
	b, err := h.Engine.CreateBot(context.Background(), push.Bot{AccountID: accountID, Platform: platform, Name: platform, Config: raw})
	if err != nil {
		h.T.Fatalf("testkit: create %s bot: %v", platform, err)
	}
	return b
}

// SendNoTarget sends m through a bot of a platform without targets (no
// target named) and returns the job as the send left it; a refused send
// fails the test.
func (h *Herald) SendNoTarget(accountID, botID int64, m push.Message) push.Job {
	h.T.Helper()
	res, err := h.Engine.Send(context.Background(), push.SendRequest{AccountID: accountID, BotID: botID, Message: m})
	if err != nil {
		h.T.Fatalf("testkit: send through bot %d: %v", botID, err)
	}
	return res.Jobs[0]
}

// Settled waits until a job is neither queued nor running and returns it.
func (h *Herald) Settled(id string, timeout time.Duration) push.Job {
	h.T.Helper()
	return settled(h.T, h.Engine, id, timeout)
}

// settled polls a job until it is neither queued nor running, failing tb
// after timeout.
func settled(tb testing.TB, e *push.Engine, id string, timeout time.Duration) push.Job {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j, err := e.JobByID(context.Background(), id)
		if err != nil {
			tb.Fatalf("testkit: job %s: %v", id, err)
		}
		if !j.State.Pending() {
			return j
		}
		if time.Now().After(deadline) {
			tb.Fatalf("testkit: job %s is still %s after %s", id, j.State, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
