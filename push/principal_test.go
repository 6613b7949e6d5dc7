package push_test

import (
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestPrincipals: every verb of the services decides itself who may use
// it. A member sees its own account's objects only (another account's
// are NotFound, as if they did not exist), operator verbs refuse members
// with Forbidden, and System may do everything.
func TestPrincipals(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}), testkit.WithLimits(push.Limits{SyncWait: 10 * time.Millisecond}))
	a := h.Seed(t)
	b := h.Seed(t)
	res, err := h.Engine.Send(ctx, push.AccountPrincipal(a.Account.ID), push.SendRequest{BotID: a.Bot.ID, TargetID: a.Target.ID, Message: text("x")})
	if err != nil {
		t.Fatal(err)
	}
	job := res.Jobs[0].ID
	keys, err := h.Engine.Keys().List(ctx, push.System(), push.KeyFilter{AccountID: a.Account.ID})
	if err != nil {
		t.Fatal(err)
	}
	keyA := keys.Items[0].ID
	suspended := push.AccountSuspended
	e := h.Engine
	verbs := []struct {
		name string
		call func(p push.Principal) error
		// member: the kind an account's own member gets (Other: allowed)
		member push.Kind
	}{
		{"account get", func(p push.Principal) error { _, err := e.Accounts().Get(ctx, p, a.Account.ID); return err }, push.Other},
		{"account create", func(p push.Principal) error { _, err := e.Accounts().Create(ctx, p, "new"); return err }, push.Forbidden},
		{"account update", func(p push.Principal) error {
			_, err := e.Accounts().Update(ctx, p, a.Account.ID, push.AccountUpdate{Status: &suspended})
			if err == nil {
				active := push.AccountActive
				_, err = e.Accounts().Update(ctx, p, a.Account.ID, push.AccountUpdate{Status: &active})
			}
			return err
		}, push.Forbidden},
		{"key create", func(p push.Principal) error {
			_, _, err := e.Keys().Create(ctx, p, push.KeyCreate{AccountID: a.Account.ID})
			return err
		}, push.Other},
		{"key import", func(p push.Principal) error {
			_, err := e.Keys().Import(ctx, p, push.KeyCreate{AccountID: a.Account.ID}, "hrd_"+push.NewJobID())
			return err
		}, push.Forbidden},
		{"key get", func(p push.Principal) error { _, err := e.Keys().Get(ctx, p, keyA); return err }, push.Other},
		{"key list", func(p push.Principal) error {
			_, err := e.Keys().List(ctx, p, push.KeyFilter{AccountID: a.Account.ID})
			return err
		}, push.Other},
		{"bot create", func(p push.Principal) error {
			_, err := e.Bots().Create(ctx, p, push.Bot{AccountID: a.Account.ID, Platform: "ntfy", Name: "n", Config: []byte(`{"server":"https://ntfy.example.com","topic":"t"}`)})
			return err
		}, push.Other},
		{"bot get", func(p push.Principal) error { _, err := e.Bots().Get(ctx, p, a.Bot.ID); return err }, push.Other},
		{"bot list", func(p push.Principal) error {
			_, err := e.Bots().List(ctx, p, push.BotFilter{AccountID: a.Account.ID})
			return err
		}, push.Other},
		{"target get", func(p push.Principal) error { _, err := e.Targets().Get(ctx, p, a.Target.ID); return err }, push.Other},
		{"target list", func(p push.Principal) error {
			_, err := e.Targets().List(ctx, p, push.TargetFilter{BotID: a.Bot.ID})
			return err
		}, push.Other},
		{"job get", func(p push.Principal) error { _, err := e.Jobs().Get(ctx, p, job); return err }, push.Other},
		{"ledger list", func(p push.Principal) error {
			_, err := e.Ledger().List(ctx, p, push.LedgerFilter{AccountID: a.Account.ID})
			return err
		}, push.Other},
		{"ledger set balance", func(p push.Principal) error {
			_, err := e.Ledger().SetBalance(ctx, p, a.Account.ID, 99)
			return err
		}, push.Forbidden},
		{"send", func(p push.Principal) error {
			_, err := e.Send(ctx, p, push.SendRequest{BotID: a.Bot.ID, TargetID: a.Target.ID, Message: text("y")})
			return err
		}, push.Other},
	}
	for _, v := range verbs {
		t.Run(v.name, func(t *testing.T) {
			if err := v.call(push.System()); err != nil {
				t.Errorf("System: %v", err)
			}
			if err := v.call(push.AccountPrincipal(a.Account.ID)); push.KindOf(err) != v.member && !(v.member == push.Other && err == nil) {
				t.Errorf("the account's member: %v, want %v", err, v.member)
			}
			// Another account's member is refused as the member is, or
			// finds nothing at all: the account is not one it sees.
			if err := v.call(push.AccountPrincipal(b.Account.ID)); push.KindOf(err) != push.NotFound && (v.member != push.Forbidden || push.KindOf(err) != push.Forbidden) {
				t.Errorf("another account's member: %v, want not found (or forbidden)", err)
			}
		})
	}
	// Canceling another account's job is NotFound and leaves it queued.
	if _, err := e.Jobs().Cancel(ctx, push.AccountPrincipal(b.Account.ID), job); push.KindOf(err) != push.NotFound {
		t.Fatalf("cancel by another account: %v", err)
	}
	if j, _ := e.Jobs().Get(ctx, push.System(), job); j.State != push.StateQueued {
		t.Fatalf("job %s after a refused cancel", j.State)
	}
	// System sends in the bot's account; bots of two accounts in one
	// request are refused.
	r, err := e.Send(ctx, push.System(), push.SendRequest{BotID: b.Bot.ID, TargetID: b.Target.ID, Message: text("z")})
	if err != nil || r.Jobs[0].AccountID != b.Account.ID {
		t.Fatalf("System send: %+v, %v", r.Jobs, err)
	}
	_, err = e.SendMulti(ctx, push.System(), push.MultiRequest{Message: text("z"), Groups: []push.Group{
		{BotID: a.Bot.ID, TargetIDs: []int64{a.Target.ID}}, {BotID: b.Bot.ID, TargetIDs: []int64{b.Target.ID}}}})
	if push.ReasonOf(err) != "bots_of_several_accounts" {
		t.Fatalf("System send across accounts: %v", err)
	}
}
