package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/push/pushtest"
)

// TestDeployed checks the application's alerts on the engine of
// package pushtest, whose platform records what it receives and answers
// as each case tells it to.
func TestDeployed(t *testing.T) {
	tests := []struct {
		name   string
		fail   *push.SendError // how the platform answers; nil: it delivers
		state  push.State
		errHas string // "" for no error
		sent   int    // messages the platform received
	}{
		{name: "delivered", state: push.StateSucceeded, sent: 1},
		{name: "refused", fail: push.DefinitiveError("403", "the bot was blocked"), state: push.StateFailed, errHas: "refused it"},
		{name: "answer lost", fail: push.UncertainError(errors.New("connection reset")), state: push.StateUncertain, errHas: "may or may not", sent: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pushtest.New(t)
			f := h.Seed(t)
			if tt.fail != nil {
				h.Platform.Fail(-1, tt.fail)
			}
			a := alerts{eng: h.Engine, account: f.Account.ID, bot: f.Bot.ID, dest: f.Target.ID}
			j, err := a.deployed(context.Background(), "v42")
			if j.State != tt.state || (err == nil) != (tt.errHas == "") || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
				t.Fatalf("deployed: job %s, error %v; want %s and an error holding %q", j.State, err, tt.state, tt.errHas)
			}
			sent := h.Platform.Sent()
			if len(sent) != tt.sent {
				t.Fatalf("the platform received %d messages, want %d: %+v", len(sent), tt.sent, sent)
			}
			if tt.sent > 0 && (sent[0].Content != "**deployed** v42" || sent[0].Type != push.MsgTypeMarkdown || sent[0].TargetID != f.Target.ID) {
				t.Errorf("the platform received %+v", sent[0])
			}
		})
	}
}

// TestDeployedOnce checks that announcing one version twice sends it once.
func TestDeployedOnce(t *testing.T) {
	h := pushtest.New(t)
	f := h.Seed(t)
	a := alerts{eng: h.Engine, account: f.Account.ID, bot: f.Bot.ID, dest: f.Target.ID}
	first, err := a.deployed(context.Background(), "v43")
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.deployed(context.Background(), "v43")
	if err != nil || again.ID != first.ID {
		t.Fatalf("the second call: job %s, error %v; want the first call's job %s", again.ID, err, first.ID)
	}
	if sent := h.Platform.Sent(); len(sent) != 1 {
		t.Errorf("the platform received %d messages, want 1: %+v", len(sent), sent)
	}
}
