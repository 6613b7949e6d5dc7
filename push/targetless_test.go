package push_test

import (
	"github.com/heraldpush/herald/internal/fake"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// The engine's own API refuses targets for a bot without targets, whatever
// their shape, and every batch that names such a bot.
func TestEngineTargetlessRules(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	ntfy := fake.NewNtfy(t)
	bot := h.PlatformBot(t, f.Account.ID, "ntfy", map[string]any{"server": ntfy.URL(), "topic": "t"})
	msg := text("x")
	tests := []struct {
		name   string
		call   func() error
		reason string
	}{
		{"single, no target", func() error {
			_, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: bot.ID, Message: msg})
			return err
		}, ""},
		{"single, a target", func() error {
			_, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: bot.ID, TargetID: f.Target.ID, Message: msg})
			return err
		}, "platform_has_no_targets"},
		{"single, a negative target", func() error {
			_, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: bot.ID, TargetID: -1, Message: msg})
			return err
		}, "platform_has_no_targets"},
		{"batch", func() error {
			_, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(f.Account.ID), push.BatchRequest{BotID: bot.ID, TargetIDs: []int64{1}, Message: msg})
			return err
		}, "use_single_send"},
		{"batch, no targets", func() error {
			_, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(f.Account.ID), push.BatchRequest{BotID: bot.ID, Message: msg})
			return err
		}, "use_single_send"},
		{"multi", func() error {
			_, err := h.Engine.SendMulti(ctx, push.AccountPrincipal(f.Account.ID), push.MultiRequest{Message: msg, Groups: []push.Group{
				{BotID: f.Bot.ID, TargetIDs: []int64{f.Target.ID}}, {BotID: bot.ID},
			}})
			return err
		}, "use_single_send"},
		{"telegram still needs its target", func() error {
			_, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, Message: msg})
			return err
		}, "missing_target"},
	}
	for _, tt := range tests {
		err := tt.call()
		if tt.reason == "" && err != nil || tt.reason != "" && (push.ReasonOf(err) != tt.reason || push.KindOf(err) != push.Invalid) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.reason)
		}
	}
	if ntfy.Requests() != 1 || len(h.Telegram.Messages()) != 0 || h.CountJobs(t) != 1 {
		t.Fatalf("ntfy %d requests, telegram %d messages, %d jobs; want 1, 0, 1", ntfy.Requests(), len(h.Telegram.Messages()), h.CountJobs(t))
	}
	// RefuseTargets says nothing about other accounts' bots or bots with
	// targets.
	other := h.Account(t, "other")
	if err := h.Engine.RefuseTargets(ctx, push.AccountPrincipal(other.ID), bot.ID, push.RequestKindSingle); err != nil {
		t.Errorf("RefuseTargets for another account's bot: %v", err)
	}
	if err := h.Engine.RefuseTargets(ctx, push.AccountPrincipal(f.Account.ID), f.Bot.ID, push.RequestKindBatch); err != nil {
		t.Errorf("RefuseTargets for a telegram bot: %v", err)
	}
}
