package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestManageWithKey drives the management API with an account's key:
// bots, targets, keys, jobs and the ledger, each checked against what the
// server holds, and another account's objects refused as not found.
func TestManageWithKey(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithPoints(push.Points{Enabled: true}))
	c := s.client(t)

	me, err := c.Me(ctx)
	if err != nil || me.Account.ID != s.fx.Account.ID || me.KeyID == 0 || me.User != nil || me.Account.Points != 100 {
		t.Fatalf("me: %+v, %v", me, err)
	}

	config, _ := json.Marshal(map[string]string{"token": s.Telegram.NewBot(), "api_base": s.Telegram.URL()})
	saved, err := c.Bots().Create(ctx, client.BotCreate{Platform: "telegram", Name: "alerts", Config: config})
	if err != nil || !saved.Verified || saved.Bot.Name != "alerts" || saved.Bot.AccountID != s.fx.Account.ID {
		t.Fatalf("create a bot: %+v, %v", saved, err)
	}
	if _, err := c.Bots().Create(ctx, client.BotCreate{Platform: "telegram", Name: "bad", Config: json.RawMessage(`{"token":"123456789:AAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","api_base":"` + s.Telegram.URL() + `"}`)}); !errors.Is(err, client.ReasonCredentialsRefused) {
		t.Fatalf("a bot whose token the platform refuses: want credentials_refused, got %v", err)
	}
	bots, err := c.Bots().List(ctx, client.BotFilter{ListOptions: client.ListOptions{Limit: 1}})
	if err != nil || len(bots.Items) != 1 || bots.Items[0].ID != saved.Bot.ID || bots.Next == "" {
		t.Fatalf("first page of one bot: want the newest and a cursor, got %+v, %v", bots, err)
	}
	rest, err := c.Bots().List(ctx, client.BotFilter{ListOptions: client.ListOptions{Cursor: bots.Next}})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].ID != s.fx.Bot.ID || rest.Next != "" {
		t.Fatalf("next page: %+v, %v", rest, err)
	}
	name := "alerts (prod)"
	if u, err := c.Bots().Update(ctx, saved.Bot.ID, client.BotUpdate{Name: &name}); err != nil || u.Bot.Name != name || u.Bot.UpdatedAt.IsZero() {
		t.Fatalf("rename the bot: %+v, %v", u, err)
	}
	if ok, err := c.Bots().Verify(ctx, saved.Bot.ID); err != nil || !ok {
		t.Fatalf("verify: %v, %v", ok, err)
	}

	s.Telegram.AddChat("4242")
	tg, err := c.Targets().Bind(ctx, saved.Bot.ID, client.TargetBind{Type: "user", Address: "4242", Name: "Ada"})
	if err != nil || tg.BotID != saved.Bot.ID || tg.Presence != "active" {
		t.Fatalf("bind: %+v, %v", tg, err)
	}
	if r, err := c.Targets().Rename(ctx, tg.ID, "Ada Lovelace"); err != nil || r.Name != "Ada Lovelace" {
		t.Fatalf("rename the target: %+v, %v", r, err)
	}
	targets, err := c.Targets().List(ctx, client.TargetFilter{BotID: saved.Bot.ID})
	if err != nil || len(targets.Items) != 1 || targets.Items[0].ID != tg.ID {
		t.Fatalf("targets: %+v, %v", targets, err)
	}

	// A send through the new bot shows in the jobs and the ledger.
	res, err := c.Send(ctx, client.Message{BotID: saved.Bot.ID, TargetID: tg.ID, Content: "hello Ada", Key: "ada-1"})
	if err != nil || res.Outcome != client.Delivered {
		t.Fatalf("send: %+v, %v", res, err)
	}
	jobs, err := c.Jobs().List(ctx, client.JobFilter{Key: "ada-1"})
	if err != nil || len(jobs.Items) != 1 || jobs.Items[0].ID != res.JobID || jobs.Items[0].Outcome != client.Delivered || jobs.Items[0].Content != "hello Ada" {
		t.Fatalf("jobs of the key: %+v, %v", jobs, err)
	}
	j, err := c.Jobs().Get(ctx, res.JobID)
	if err != nil || j.IdempotencyKey != "ada-1" || j.Cost != 1 || len(j.History) < 3 || j.History[len(j.History)-1].State != client.StateSucceeded {
		t.Fatalf("the job with its history: %+v, %v", j, err)
	}
	if got, err := c.Jobs().List(ctx, client.JobFilter{State: client.StateFailed}); err != nil || len(got.Items) != 0 {
		t.Fatalf("no failed jobs: %+v, %v", got, err)
	}
	ledger, err := c.Ledger().List(ctx, client.LedgerFilter{})
	if err != nil || len(ledger.Items) != 2 || ledger.Items[0].JobID != res.JobID || ledger.Items[0].Amount != -1 {
		t.Fatalf("the ledger: want the charge of the send above the initial points, got %+v, %v", ledger, err)
	}
	if _, err := c.Ledger().Grant(ctx, s.fx.Account.ID, 5, "a gift"); !errors.Is(err, client.ReasonOperatorOnly) {
		t.Fatalf("a member's key granting points: want operator_only, got %v", err)
	}
	if a, err := c.Accounts().Get(ctx, s.fx.Account.ID); err != nil || a.Points != 99 {
		t.Fatalf("the account after one send: %+v, %v", a, err)
	}

	if n, err := c.Targets().Unbind(ctx, tg.ID); err != nil || n != 0 {
		t.Fatalf("unbind: %d, %v", n, err)
	}
	if n, err := c.Bots().Delete(ctx, saved.Bot.ID); err != nil || n != 0 {
		t.Fatalf("delete the bot: %d, %v", n, err)
	}
	if _, err := c.Bots().Get(ctx, saved.Bot.ID); !errors.Is(err, client.ReasonBotNotFound) {
		t.Fatalf("a deleted bot: want bot_not_found, got %v", err)
	}

	other := s.Account(t, "other")
	otherBot := s.TelegramBot(t, other.ID)
	var he *client.Error
	if _, err := c.Bots().Get(ctx, otherBot.ID); !errors.As(err, &he) || he.Status != 404 {
		t.Fatalf("another account's bot: want 404, got %v", err)
	}

	// Keys: made (the secret once), listed, and revoked, after which the
	// server refuses the key.
	nk, err := c.Keys().Create(ctx, client.KeyCreate{Name: "ci", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil || nk.Secret == "" || nk.Key.Name != "ci" || nk.Key.ExpiresAt.IsZero() {
		t.Fatalf("create a key: %+v, %v", nk, err)
	}
	keys, err := c.Keys().List(ctx, client.KeyFilter{})
	if err != nil || len(keys.Items) != 2 || keys.Items[0].ID != nk.Key.ID {
		t.Fatalf("keys: %+v, %v", keys, err)
	}
	ci := newClient(t, s.URL, client.Options{APIKey: nk.Secret})
	if _, err := ci.Me(ctx); err != nil {
		t.Fatalf("the new key: %v", err)
	}
	if k, err := c.Keys().Revoke(ctx, nk.Key.ID); err != nil || k.RevokedAt.IsZero() {
		t.Fatalf("revoke: %+v, %v", k, err)
	}
	if _, err := ci.Send(ctx, s.message("with a revoked key")); !errors.Is(err, client.ReasonKeyRevoked) {
		t.Fatalf("a revoked key: want key_revoked, got %v", err)
	}
}

// TestManageWithSession signs people in: a member acts on its account, an
// operator grants points, a wrong password is refused, and a session
// signed out is refused.
func TestManageWithSession(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, testkit.WithPoints(push.Points{Enabled: true}))
	s.User(t, s.fx.Account.ID, "ada@example.com", push.RoleMember)
	ops := s.Account(t, "ops")
	s.User(t, ops.ID, "ops@example.com", push.RoleOperator)
	anon := newClient(t, s.URL, client.Options{})

	if _, err := anon.Sessions().SignIn(ctx, "ada@example.com", "wrong password"); !errors.Is(err, client.ReasonWrongCredentials) {
		t.Fatalf("a wrong password: want wrong_credentials, got %v", err)
	}
	if _, err := anon.Me(ctx); !errors.Is(err, client.ReasonNotSignedIn) {
		t.Fatalf("no key and no session: want not_signed_in, got %v", err)
	}
	in, err := anon.Sessions().SignIn(ctx, "ada@example.com", testkit.Password)
	if err != nil || in.Token == "" || in.User.Email != "ada@example.com" || !in.Session.Current {
		t.Fatalf("sign in: %+v, %v", in, err)
	}
	ada := newClient(t, s.URL, client.Options{Session: in.Token})
	me, err := ada.Me(ctx)
	if err != nil || me.User == nil || me.User.Email != "ada@example.com" || me.Account.ID != s.fx.Account.ID || me.Role != "member" {
		t.Fatalf("me with a session: %+v, %v", me, err)
	}
	bots, err := ada.Bots().List(ctx, client.BotFilter{})
	if err != nil || len(bots.Items) != 1 || bots.Items[0].ID != s.fx.Bot.ID {
		t.Fatalf("a member's bots: %+v, %v", bots, err)
	}
	sessions, err := ada.Sessions().List(ctx, client.ListOptions{})
	if err != nil || len(sessions.Items) != 1 || sessions.Items[0].ID != in.Session.ID {
		t.Fatalf("sessions: %+v, %v", sessions, err)
	}

	opIn, err := anon.Sessions().SignIn(ctx, "ops@example.com", testkit.Password)
	if err != nil {
		t.Fatal(err)
	}
	op := newClient(t, s.URL, client.Options{Session: opIn.Token})
	a, err := op.Ledger().Grant(ctx, s.fx.Account.ID, 50, "invoice 2026-11")
	if err != nil || a.Points != 150 {
		t.Fatalf("an operator's grant: %+v, %v", a, err)
	}
	accounts, err := op.Accounts().List(ctx, client.ListOptions{})
	if err != nil || len(accounts.Items) != 2 {
		t.Fatalf("an operator lists every account: %+v, %v", accounts, err)
	}
	made, err := op.Accounts().Create(ctx, "new customer")
	if err != nil || made.Points != 100 || made.Status != "active" {
		t.Fatalf("an operator makes an account: %+v, %v", made, err)
	}
	suspended := "suspended"
	if u, err := op.Accounts().Update(ctx, made.ID, client.AccountUpdate{Status: &suspended}); err != nil || u.Status != "suspended" {
		t.Fatalf("suspend: %+v, %v", u, err)
	}

	if err := ada.Sessions().SignOut(ctx, 0); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	var he *client.Error
	if _, err := ada.Me(ctx); !errors.As(err, &he) || he.Status != 401 {
		t.Fatalf("a signed-out session: want 401, got %v", err)
	}
}

// TestManagePeopleCodesAndAudit drives users, invites, bind codes, the
// platforms and the audit trail: an operator makes and removes a user,
// a member invites and revokes, a bind code is made, listed and revoked,
// and the audit trail holds the changes (and no secret).
func TestManagePeopleCodesAndAudit(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c := s.client(t)
	ops := s.Account(t, "ops")
	s.User(t, ops.ID, "ops@example.com", push.RoleOperator)
	in, err := newClient(t, s.URL, client.Options{}).Sessions().SignIn(ctx, "ops@example.com", testkit.Password)
	if err != nil {
		t.Fatal(err)
	}
	op := newClient(t, s.URL, client.Options{Session: in.Token})

	u, err := op.Users().Create(ctx, client.UserCreate{AccountID: s.fx.Account.ID, Email: "grace@example.com", Password: "a long enough passphrase 42"})
	if err != nil || u.Role != "member" || u.AccountID != s.fx.Account.ID {
		t.Fatalf("an operator makes a user: %+v, %v", u, err)
	}
	if _, err := c.Users().Create(ctx, client.UserCreate{AccountID: s.fx.Account.ID, Email: "eve@example.com", Password: "a long enough passphrase 42"}); !errors.Is(err, client.ReasonOperatorOnly) {
		t.Fatalf("a member's key making a user: want operator_only, got %v", err)
	}
	users, err := c.Users().List(ctx, client.UserFilter{})
	if err != nil || len(users.Items) != 1 || users.Items[0].Email != "grace@example.com" {
		t.Fatalf("the account's users: %+v, %v", users, err)
	}
	pw, err := op.Users().ResetPassword(ctx, u.ID)
	if err != nil || len(pw) < 10 {
		t.Fatalf("reset password: %q, %v", pw, err)
	}
	if _, err := newClient(t, s.URL, client.Options{}).Sessions().SignIn(ctx, "grace@example.com", pw); err != nil {
		t.Fatalf("sign in with the new password: %v", err)
	}
	if err := c.Users().Delete(ctx, u.ID); err != nil {
		t.Fatalf("remove the user: %v", err)
	}
	if _, err := c.Users().Get(ctx, u.ID); err == nil {
		t.Fatal("a removed user is still shown")
	}

	inv, err := c.Invites().Create(ctx, client.InviteCreate{Email: "ada@example.com"})
	if err != nil || inv.Code == "" || inv.Invite.AccountID != s.fx.Account.ID || inv.Invite.Email != "ada@example.com" {
		t.Fatalf("invite: %+v, %v", inv, err)
	}
	if r, err := c.Invites().Revoke(ctx, inv.Invite.ID); err != nil || r.RevokedAt.IsZero() {
		t.Fatalf("revoke the invite: %+v, %v", r, err)
	}
	if l, err := c.Invites().List(ctx, client.InviteFilter{}); err != nil || len(l.Items) != 1 {
		t.Fatalf("invites: %+v, %v", l, err)
	}

	hearing := s.PlatformBot(t, s.fx.Account.ID, "telegram", map[string]string{"token": s.Telegram.NewBot(), "api_base": s.Telegram.URL(), "receive": "poll"})
	code, err := c.BindCodes().Create(ctx, hearing.ID, client.BindCodeCreate{Type: "user", Uses: 2})
	if err != nil || code.Code == "" || code.Command != "bind "+code.Code || code.BindCode.UsesLeft != 2 || code.Link == "" {
		t.Fatalf("bind code: %+v, %v", code, err)
	}
	codes, err := c.BindCodes().List(ctx, client.BindCodeFilter{BotID: hearing.ID})
	if err != nil || len(codes.Items) != 1 || codes.Items[0].ID != code.BindCode.ID {
		t.Fatalf("bind codes: %+v, %v", codes, err)
	}
	if r, err := c.BindCodes().Revoke(ctx, code.BindCode.ID); err != nil || r.RevokedAt.IsZero() {
		t.Fatalf("revoke the bind code: %+v, %v", r, err)
	}

	platforms, err := c.Platforms(ctx)
	found := false
	for _, p := range platforms {
		found = found || p.Name == "telegram" && p.Targets && p.Verifies
	}
	if err != nil || !found {
		t.Fatalf("platforms: want telegram with targets that verifies, got %+v, %v", platforms, err)
	}

	if _, err := c.Audit().List(ctx, client.AuditFilter{}); !errors.Is(err, client.ReasonOperatorOnly) {
		t.Fatalf("a member reading the audit trail: want operator_only, got %v", err)
	}
	trail, err := op.Audit().List(ctx, client.AuditFilter{AccountID: s.fx.Account.ID})
	if err != nil || len(trail.Items) < 5 {
		t.Fatalf("the audit trail of the account: %+v, %v", trail, err)
	}
	for _, e := range trail.Items {
		if e.Actor == "" || e.Action == "" || e.At.IsZero() || strings.Contains(e.Object, pw) || strings.Contains(e.Object, inv.Code) {
			t.Fatalf("audit entry %+v", e)
		}
	}
}
