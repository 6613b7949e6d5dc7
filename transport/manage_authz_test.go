package transport_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// world is a Herald with an operator, two accounts A and B with a member
// each, and everything of A that a management route can name: a second
// member, a second key, an invite, a Telegram bot with a target, a queued
// job and an uncertain one.
type world struct {
	h                   *testkit.Herald
	ops, a, b           string // session tokens
	keyA                string // A's API key
	acctA               push.Account
	userA2              push.User
	keyA2, invite, code int64
	bot                 push.Bot
	target              push.Target
	queued, uncertain   string
	opsAccount, acctBID int64
}

func newWorld(t *testing.T) *world {
	t.Helper()
	h := testkit.New(t, testkit.WithBackend(testkit.SQLite), testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: 5 * time.Millisecond, RatePerMinute: -1}))
	ctx := context.Background()
	sys := push.System()
	w := &world{h: h}
	ops := h.Account(t, "ops")
	w.opsAccount = ops.ID
	h.User(t, ops.ID, "ops@example.com", push.RoleOperator)
	f := h.Seed(t)
	w.acctA, w.keyA, w.bot, w.target = f.Account, f.Key, f.Bot, f.Target
	h.User(t, f.Account.ID, "a@example.com", push.RoleMember)
	w.userA2 = h.User(t, f.Account.ID, "a2@example.com", push.RoleMember)
	b := h.Account(t, "b")
	w.acctBID = b.ID
	h.User(t, b.ID, "b@example.com", push.RoleMember)
	k2, _, err := h.Engine.Keys().Create(ctx, sys, push.KeyCreate{AccountID: f.Account.ID, Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	w.keyA2 = k2.ID
	inv, _, err := h.Engine.Invites().Create(ctx, sys, push.InviteCreate{AccountID: f.Account.ID})
	if err != nil {
		t.Fatal(err)
	}
	w.invite = inv.ID
	// The bot hears its users, so that it takes bind codes.
	cfg := fmt.Sprintf(`{"token":%q,"api_base":%q,"receive":"poll"}`, h.Telegram.NewBot(), h.Telegram.URL())
	if w.bot, err = h.Engine.Bots().Update(ctx, sys, f.Bot.ID, push.BotUpdate{Config: []byte(cfg)}); err != nil {
		t.Fatal(err)
	}
	bc, err := h.Engine.BindCodes().Create(ctx, sys, push.BindCodeCreate{BotID: f.Bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	w.code = bc.ID
	var jobs []string
	for i := range 2 {
		res, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID,
			Message: push.Message{Content: fmt.Sprint("job ", i)}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, res.Jobs[0].ID)
	}
	w.queued, w.uncertain = jobs[0], jobs[1]
	for _, m := range [][2]push.State{{push.StateQueued, push.StateRunning}, {push.StateRunning, push.StateUncertain}} {
		if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: w.uncertain, From: m[0], To: m[1], At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	w.ops, w.a, w.b = h.SignIn(t, "ops@example.com"), h.SignIn(t, "a@example.com"), h.SignIn(t, "b@example.com")
	return w
}

// snapshot is every row of every table, to prove a refusal changed
// nothing.
func snapshot(t *testing.T, h *testkit.Herald) map[string][]string {
	t.Helper()
	out := make(map[string][]string)
	for _, table := range []string{"accounts", "api_keys", "bots", "targets", "jobs", "idempotency", "points_ledger", "backlog",
		"users", "sessions", "invites", "audit", "auth_epoch"} {
		rows, err := h.Store.DB().QueryContext(context.Background(), "SELECT * FROM "+table+" ORDER BY 1")
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], fmt.Sprint(vals))
		}
		rows.Close()
	}
	return out
}

// policy says who may use a route: everyone signed in or with a key, the
// object's account (its members, its key) and operators, operators only,
// or people (signed-in users, not keys) on their own behalf.
type policy int

const (
	anyone policy = iota
	owner
	operator
	person
)

type caller struct {
	name   string
	header func(w *world) []string
	// allowed says whether the caller may use a route of the policy.
	allowed func(policy) bool
}

func callers() []caller {
	return []caller{
		{"anonymous", func(*world) []string { return nil }, func(policy) bool { return false }},
		{"member of B", func(w *world) []string { return testkit.Cookie(w.b) }, func(p policy) bool { return p == anyone || p == person }},
		{"member of A", func(w *world) []string { return testkit.Cookie(w.a) }, func(p policy) bool { return p != operator }},
		{"A's API key", func(w *world) []string { return []string{"Authorization", "Bearer " + w.keyA} }, func(p policy) bool { return p == anyone || p == owner }},
		{"operator", func(w *world) []string { return testkit.Cookie(w.ops) }, func(policy) bool { return true }},
	}
}

// TestManageAuthorization calls every route of the management API as each
// kind of caller on a world of its own: only the cells the policy allows
// succeed; every other is 401, 403 or 404 and changes nothing in the
// database.
func TestManageAuthorization(t *testing.T) {
	const m = "/manage/v1"
	type cell struct {
		method, path string // path with %[n] verbs filled from the world
		body         func(w *world) any
		policy       policy
	}
	pw := testkit.Password
	cells := []cell{
		{"GET", "/me", nil, anyone},
		{"PUT", "/me/password", func(*world) any { return map[string]any{"current": pw, "new": "four other unrelated words"} }, person},
		{"GET", "/sessions", nil, person},
		{"DELETE", "/sessions/current", nil, person},
		{"DELETE", "/sessions", nil, person},
		{"GET", "/users?account=A", nil, owner},
		{"POST", "/users", func(w *world) any {
			return map[string]any{"accountId": w.acctA.ID, "email": "new@example.com", "password": pw, "role": "member"}
		}, operator},
		{"GET", "/users/A2", nil, owner},
		{"DELETE", "/users/A2", nil, owner},
		{"POST", "/users/A2/password", nil, operator},
		{"GET", "/invites?account=A", nil, owner},
		{"POST", "/invites", func(w *world) any { return map[string]any{"accountId": w.acctA.ID} }, owner},
		{"DELETE", "/invites/INV", nil, owner},
		{"GET", "/keys?account=A", nil, owner},
		{"POST", "/keys", func(w *world) any { return map[string]any{"accountId": w.acctA.ID, "name": "ci"} }, owner},
		{"GET", "/keys/K2", nil, owner},
		{"DELETE", "/keys/K2", nil, owner},
		{"GET", "/bots?account=A", nil, owner},
		{"POST", "/bots", func(w *world) any {
			return map[string]any{"accountId": w.acctA.ID, "platform": "ntfy", "name": "relay", "verify": false,
				"config": map[string]any{"server": "https://ntfy.example.com", "topic": "alerts"}}
		}, owner},
		{"GET", "/bots/BOT", nil, owner},
		{"PATCH", "/bots/BOT", func(*world) any { return map[string]any{"name": "renamed"} }, owner},
		{"DELETE", "/bots/BOT", nil, owner},
		{"POST", "/bots/BOT/verify", nil, owner},
		{"GET", "/bots/BOT/targets", nil, owner},
		{"POST", "/bots/BOT/targets", func(*world) any { return map[string]any{"type": "user", "address": "424242"} }, owner},
		{"POST", "/bots/BOT/bindcodes", func(*world) any { return map[string]any{"type": "user"} }, owner},
		{"GET", "/bots/BOT/bindcodes", nil, owner},
		{"DELETE", "/bindcodes/CODE", nil, owner},
		{"GET", "/bots/BOT/status", nil, owner},
		{"GET", "/targets/TGT", nil, owner},
		{"PATCH", "/targets/TGT", func(*world) any { return map[string]any{"name": "renamed"} }, owner},
		{"DELETE", "/targets/TGT", nil, owner},
		{"GET", "/jobs?account=A", nil, owner},
		{"GET", "/jobs/QUEUED", nil, owner},
		{"POST", "/jobs/QUEUED/cancel", nil, owner},
		{"POST", "/jobs/UNCERTAIN/resolve", func(*world) any { return map[string]any{"outcome": "succeeded", "note": "seen"} }, owner},
		{"GET", "/ledger?account=A", nil, owner},
		{"POST", "/ledger", func(w *world) any { return map[string]any{"accountId": w.acctA.ID, "amount": 5, "reason": "gift"} }, operator},
		{"GET", "/accounts", nil, anyone},
		{"POST", "/accounts", func(*world) any { return map[string]any{"name": "new"} }, operator},
		{"GET", "/accounts/A", nil, owner},
		{"PATCH", "/accounts/A", func(*world) any { return map[string]any{"status": "suspended"} }, operator},
		{"GET", "/audit", nil, operator},
		{"GET", "/platforms", nil, anyone},
	}
	// The table covers every route of the management API that needs a
	// caller: a new route without a row fails here.
	covered := map[string]bool{}
	for _, c := range cells {
		covered[c.method+" "+strings.Split(c.path, "?")[0]] = true
	}
	probe := testkit.New(t, testkit.WithBackend(testkit.SQLite), testkit.WithoutStart())
	for _, rt := range probe.API.Routes() {
		if !rt.Auth || !rt.Browser {
			continue
		}
		p := strings.TrimPrefix(rt.Path, transport.BasePath+m)
		found := false
		for k := range covered {
			method, path, _ := strings.Cut(k, " ")
			if method == rt.Method && routeMatches(p, path) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s has no row in the authorization table", rt.Method, rt.Path)
		}
	}
	for _, c := range cells {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			// A refused call changes nothing (checked below) and a GET
			// changes nothing another call reads, so they share one
			// world; an allowed unsafe call gets a world of its own.
			shared := newWorld(t)
			for _, who := range callers() {
				t.Run("as "+who.name, func(t *testing.T) {
					w := shared
					if who.allowed(c.policy) && c.method != http.MethodGet {
						w = newWorld(t)
					}
					path := strings.NewReplacer("A2", fmt.Sprint(w.userA2.ID), "INV", fmt.Sprint(w.invite), "K2", fmt.Sprint(w.keyA2),
						"BOT", fmt.Sprint(w.bot.ID), "CODE", fmt.Sprint(w.code), "TGT", fmt.Sprint(w.target.ID), "QUEUED", w.queued, "UNCERTAIN", w.uncertain,
						"account=A", fmt.Sprint("account=", w.acctA.ID), "/accounts/A", fmt.Sprint("/accounts/", w.acctA.ID)).Replace(c.path)
					var body any
					if c.body != nil {
						body = c.body(w)
					}
					before := snapshot(t, w.h)
					r := w.h.Call(t, c.method, m+path, "", body, who.header(w)...)
					if who.allowed(c.policy) {
						if r.Status < 200 || r.Status > 299 {
							t.Fatalf("allowed, but answered %d %s", r.Status, r.Body)
						}
						return
					}
					if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
						t.Fatalf("refused with %d %s, want 401, 403 or 404", r.Status, r.Body)
					}
					if diff := cmp.Diff(before, snapshot(t, w.h)); diff != "" {
						t.Fatalf("a refused request (%d %s) changed the database (-before +after):\n%s", r.Status, r.Body, diff)
					}
				})
			}
		})
	}
}

// routeMatches reports whether a router path (/bots/:id/targets) has the
// shape of a table path (/bots/BOT/targets).
func routeMatches(route, path string) bool {
	rs, ps := strings.Split(route, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i := range rs {
		if !strings.HasPrefix(rs[i], ":") && rs[i] != ps[i] {
			return false
		}
	}
	return true
}
