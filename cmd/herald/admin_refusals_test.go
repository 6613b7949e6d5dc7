package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
)

// TestAdminPoints: grants add, negative grants deduct, a deduction below
// zero is refused with nothing changed, and the ledger lists every
// movement oldest first, summing to the balance.
func TestAdminPoints(t *testing.T) {
	d := newAdminDB(t)
	d.run(t, "account", "create", "--name", "acme")
	steps := []struct {
		amount, reason string
		balance        float64
	}{
		{"250", "invoice 2026-11", 350},
		{"-50", "refund of a duplicate charge", 300},
		{"7", "goodwill", 307},
	}
	for _, s := range steps {
		a := d.run(t, "points", "grant", "--account", "1", "--amount", s.amount, "--reason", s.reason)
		if a["points"] != s.balance {
			t.Fatalf("grant %s: balance %v, want %v", s.amount, a["points"], s.balance)
		}
	}
	snap := d.snapshot(t)
	d.refused(t, nil, []string{"points", "grant", "--account", "1", "--amount", "-308", "--reason", "too much"},
		"--amount: ", "307 points", "below zero", "(insufficient_points)")
	if d.snapshot(t) != snap {
		t.Fatal("the refused deduction changed the database")
	}
	if a := d.run(t, "account", "show", "--id", "1"); a["points"] != 307.0 {
		t.Fatalf("balance after the refusal: %v", a["points"])
	}
	ledger := itemsOf(t, d.run(t, "points", "ledger", "--account", "1"))
	type row struct {
		Kind   string
		Amount float64
		Note   string
	}
	var got []row
	sum := 0.0
	for _, e := range ledger {
		got = append(got, row{e["kind"].(string), e["amount"].(float64), e["note"].(string)})
		sum += e["amount"].(float64)
	}
	want := []row{{"initial", 100, "initial points, at the account's creation"}, {"grant", 250, "invoice 2026-11"}, {"grant", -50, "refund of a duplicate charge"}, {"grant", 7, "goodwill"}}
	if diff := cmp.Diff(want, got); diff != "" || sum != 307 {
		t.Fatalf("ledger (-want +got), sum %v:\n%s", sum, diff)
	}
}

// TestAdminRefusals: each refused command exits 1 with nothing on stdout,
// a message that names the flag (or the rule) and the reason, and leaves
// the database as it was.
func TestAdminRefusals(t *testing.T) {
	d := newAdminDB(t)
	tg := fake.NewTelegram(t)
	token := tg.NewBot()
	d.secret(token, strings.Split(token, ":")[1])
	d.run(t, "account", "create", "--name", "acme")
	d.run(t, "user", "create", "--account", "1", "--email", "ops@example.com", "--role", "operator")
	d.run(t, "bot", "create", "--account", "1", "--platform", "telegram", "--name", "listening",
		"--config", `{"token":"`+token+`","api_base":"`+tg.URL()+`","receive":"poll"}`)
	d.run(t, "bot", "create", "--account", "1", "--platform", "telegram", "--name", "deaf", "--config", `{"token":"`+token+`","api_base":"`+tg.URL()+`"}`)
	d.run(t, "target", "bind", "--bot", "1", "--type", "user", "--address", "4242")
	d.run(t, "invite", "create", "--account", "1")
	d.run(t, "target", "invite", "--bot", "1")

	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string
	}{
		{"account rename: unknown", []string{"account", "rename", "--id", "9", "--name", "x"}, "", []string{"--id: account 9 does not exist", "(account_not_found)"}},
		{"account rename: empty name", []string{"account", "rename", "--id", "1", "--name", " "}, "", []string{"--name: ", "(invalid_name)"}},
		{"account rename: no id", []string{"account", "rename", "--name", "x"}, "", []string{"--id is required"}},
		{"user create: bad email", []string{"user", "create", "--account", "1", "--email", "nope"}, "", []string{"--email: ", "(invalid_email)"}},
		{"user create: taken", []string{"user", "create", "--account", "1", "--email", "OPS@example.com"}, "", []string{"--email: ", "already exists", "(email_taken)"}},
		{"user create: role", []string{"user", "create", "--account", "1", "--email", "x@example.com", "--role", "boss"}, "", []string{"--role: ", "(invalid_role)"}},
		{"user create: account", []string{"user", "create", "--account", "9", "--email", "x@example.com"}, "", []string{"--account: ", "(account_not_found)"}},
		{"user create: weak stdin", []string{"user", "create", "--account", "1", "--email", "x@example.com", "--password-stdin"}, "short\n", []string{"--password-stdin: ", "(weak_password)"}},
		{"user create: empty stdin", []string{"user", "create", "--account", "1", "--email", "x@example.com", "--password-stdin"}, "\n", []string{"--password-stdin: ", "(weak_password)"}},
		{"user create: no email", []string{"user", "create", "--account", "1"}, "", []string{"--email is required"}},
		{"user reset-password: unknown", []string{"user", "reset-password", "--id", "9"}, "", []string{"--id: ", "(user_not_found)"}},
		{"user remove: unknown", []string{"user", "remove", "--id", "9"}, "", []string{"--id: ", "(user_not_found)"}},
		{"user remove: last operator", []string{"user", "remove", "--id", "1"}, "", []string{"--id: ", "last operator", "(last_operator)"}},
		{"invite create: neither", []string{"invite", "create"}, "", []string{"--account or --new-account"}},
		{"invite create: both", []string{"invite", "create", "--account", "1", "--new-account"}, "", []string{"--account or --new-account", "not both"}},
		{"invite create: ttl", []string{"invite", "create", "--account", "1", "--ttl", "3000h"}, "", []string{"--ttl: ", "(invalid_expiry)"}},
		{"invite create: zero ttl", []string{"invite", "create", "--account", "1", "--ttl", "0"}, "", []string{"--ttl: "}},
		{"invite create: account", []string{"invite", "create", "--account", "9"}, "", []string{"--account: ", "(account_not_found)"}},
		{"invite create: role", []string{"invite", "create", "--account", "1", "--role", "boss"}, "", []string{"--role: ", "(invalid_role)"}},
		{"invite create: email", []string{"invite", "create", "--account", "1", "--email", "nope"}, "", []string{"--email: ", "(invalid_email)"}},
		{"invite revoke: unknown", []string{"invite", "revoke", "--id", "9"}, "", []string{"--id: ", "(invite_not_found)"}},
		{"bot update: nothing", []string{"bot", "update", "--id", "1"}, "", []string{"--name, --config", "nothing to change"}},
		{"bot update: verify alone", []string{"bot", "update", "--id", "1", "--name", "x", "--verify"}, "", []string{"--verify", "--config"}},
		{"bot update: not JSON", []string{"bot", "update", "--id", "1", "--config", "not json"}, "", []string{"--config: ", "(invalid_config)"}},
		{"bot update: bad token", []string{"bot", "update", "--id", "1", "--config", `{"token":"bad"}`}, "", []string{"--config: ", "malformed", "(invalid_config)"}},
		{"bot update: unknown", []string{"bot", "update", "--id", "9", "--name", "x"}, "", []string{"--id: bot 9 does not exist", "(bot_not_found)"}},
		{"bot update: empty name", []string{"bot", "update", "--id", "1", "--name", ""}, "", []string{"--name: ", "(invalid_name)"}},
		{"bot verify: unknown", []string{"bot", "verify", "--id", "9"}, "", []string{"--id: ", "(bot_not_found)"}},
		{"bot delete: unknown", []string{"bot", "delete", "--id", "9"}, "", []string{"--id: ", "(bot_not_found)"}},
		{"target rename: unknown", []string{"target", "rename", "--id", "9", "--name", "x"}, "", []string{"--id: ", "(target_not_found)"}},
		{"target rename: empty", []string{"target", "rename", "--id", "1", "--name", ""}, "", []string{"--name: ", "(invalid_name)"}},
		{"target unbind: unknown", []string{"target", "unbind", "--id", "9"}, "", []string{"--id: ", "(target_not_found)"}},
		{"target invite: unknown bot", []string{"target", "invite", "--bot", "9"}, "", []string{"--bot: bot 9 does not exist", "(bot_not_found)"}},
		{"target invite: deaf bot", []string{"target", "invite", "--bot", "2"}, "", []string{"--bot: ", "does not hear its users", "(bot_not_listening)"}},
		{"target invite: type", []string{"target", "invite", "--bot", "1", "--type", "room"}, "", []string{"--type: ", "(invalid_target_type)"}},
		{"target invite: zero uses", []string{"target", "invite", "--bot", "1", "--uses", "0"}, "", []string{"--uses: "}},
		{"target invite: many uses", []string{"target", "invite", "--bot", "1", "--uses", "5000"}, "", []string{"--uses: ", "(invalid_uses)"}},
		{"target invite: ttl", []string{"target", "invite", "--bot", "1", "--ttl", "1000h"}, "", []string{"--ttl: ", "(invalid_expiry)"}},
		{"target invites: unknown bot", []string{"target", "invites", "--bot", "9"}, "", []string{"--bot: ", "(bot_not_found)"}},
		{"target invite-revoke: unknown", []string{"target", "invite-revoke", "--id", "9"}, "", []string{"--id: ", "(bind_code_not_found)"}},
		{"points grant: below zero", []string{"points", "grant", "--account", "1", "--amount", "-101", "--reason", "x"}, "", []string{"--amount: ", "(insufficient_points)"}},
		{"points grant: zero", []string{"points", "grant", "--account", "1", "--amount", "0", "--reason", "x"}, "", []string{"--amount: ", "(invalid_amount)"}},
		{"points grant: no reason", []string{"points", "grant", "--account", "1", "--amount", "5"}, "", []string{"--reason: ", "(invalid_reason)"}},
		{"points grant: account", []string{"points", "grant", "--account", "9", "--amount", "5", "--reason", "x"}, "", []string{"--account: ", "(account_not_found)"}},
		{"points ledger: account", []string{"points", "ledger", "--account", "9"}, "", []string{"--account: ", "(account_not_found)"}},
		{"job list: zero limit", []string{"job", "list", "--limit", "0"}, "", []string{"--limit: "}},
		{"job list: big limit", []string{"job", "list", "--limit", "501"}, "", []string{"--limit: ", "(invalid_limit)"}},
		{"job list: cursor", []string{"job", "list", "--cursor", "zz"}, "", []string{"--cursor: ", "(invalid_cursor)"}},
		{"job list: state", []string{"job", "list", "--state", "bogus"}, "", []string{"--state: ", "(invalid_state)"}},
		{"job list: since", []string{"job", "list", "--since", "yesterday"}, "", []string{"--since: ", "RFC 3339"}},
		{"job list: range", []string{"job", "list", "--since", "2026-11-24T10:00:00Z", "--until", "2026-11-24T09:00:00Z"}, "", []string{"--until: ", "(invalid_range)"}},
		{"job list: key", []string{"job", "list", "--key", "no spaces"}, "", []string{"--key: ", "(invalid_idempotency_key)"}},
		{"job show: not an id", []string{"job", "show", "--id", "nope"}, "", []string{"--id: ", "(invalid_job_id)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin []byte
			if tt.stdin != "" {
				stdin = []byte(tt.stdin)
			}
			before := d.snapshot(t)
			d.refused(t, stdin, tt.args, tt.want...)
			if after := d.snapshot(t); after != before {
				t.Fatalf("the refused command changed the database:\n%s", cmp.Diff(before, after))
			}
		})
	}
}
