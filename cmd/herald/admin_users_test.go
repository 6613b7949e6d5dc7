package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/transport"
)

// signIn signs in through POST /api/manage/v1/sessions and returns the
// status and the session cookie ("" when none was set).
func signIn(t *testing.T, p *testkit.Process, email, password string) (int, string) {
	t.Helper()
	r := testkit.Call(t, p.URL, "POST", "/manage/v1/sessions", "", map[string]any{"email": email, "password": password})
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == transport.SessionCookie && c.Value != "" {
			return r.Status, c.Value
		}
	}
	return r.Status, ""
}

// TestAdminUsers: a generated password and one read from stdin both sign
// in through the management API (the stdin one without its newline, and
// not with it); a reset password replaces the old one; the last operator
// cannot be removed.
func TestAdminUsers(t *testing.T) {
	d := newAdminDB(t)
	d.run(t, "account", "create", "--name", "ops")
	p := testkit.StartServe(t, heraldBin, d.env)

	op := d.run(t, "user", "create", "--account", "1", "--email", "Ops@Example.com", "--role", "operator")
	generated, _ := op["password"].(string)
	if !regexp.MustCompile(`^[0-9A-Za-z]{20}$`).MatchString(generated) || op["email"] != "ops@example.com" || op["role"] != "operator" {
		t.Fatalf("user create printed %v; want a 20-character base62 password", op)
	}
	const typed = "purple elephant marching slowly"
	for _, input := range []string{typed + "\n", typed + "\r\n"} {
		email := fmt.Sprintf("ada%d@example.com", len(input))
		u := d.must(t, []byte(input), "user", "create", "--account", "1", "--email", email, "--password-stdin")
		if _, ok := u["password"]; ok || u["role"] != "member" {
			t.Fatalf("user create --password-stdin printed %v; want no password, role member", u)
		}
		if status, cookie := signIn(t, p, email, typed); status != http.StatusOK || cookie == "" {
			t.Fatalf("sign-in with the stdin password (%q): %d, cookie %q", input, status, cookie)
		}
		if status, _ := signIn(t, p, email, input); status == http.StatusOK {
			t.Fatalf("sign-in with the password and its newline %q: %d; want refused", input, status)
		}
	}
	if status, cookie := signIn(t, p, "ops@example.com", generated); status != http.StatusOK || cookie == "" {
		t.Fatalf("sign-in with the generated password: %d, cookie %q", status, cookie)
	}

	reset := d.run(t, "user", "reset-password", "--id", "1")
	fresh, _ := reset["password"].(string)
	if reset["id"] != 1.0 || len(fresh) != 20 || fresh == generated {
		t.Fatalf("reset-password printed %v", reset)
	}
	d.secret(generated, fresh, typed)
	if status, _ := signIn(t, p, "ops@example.com", generated); status == http.StatusOK {
		t.Fatal("the old password still signs in after reset-password")
	}
	if status, cookie := signIn(t, p, "ops@example.com", fresh); status != http.StatusOK || cookie == "" {
		t.Fatalf("sign-in with the reset password: %d", status)
	}

	// The last operator stays; a member goes.
	before := d.run(t, "user", "list")
	if got := ids(itemsOf(t, before)); !cmp.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("user list ids %v, want oldest first", got)
	}
	snap := d.snapshot(t)
	d.refused(t, nil, []string{"user", "remove", "--id", "1"}, "--id: ", "last operator", "(last_operator)")
	if after := d.run(t, "user", "list"); !cmp.Equal(after, before) || d.snapshot(t) != snap {
		t.Fatalf("the refused removal changed the users: %v", after)
	}
	if got := d.run(t, "user", "remove", "--id", "2"); !cmp.Equal(got, map[string]any{"id": 2.0, "removed": true}) {
		t.Fatalf("user remove printed %v", got)
	}
	if got := ids(itemsOf(t, d.run(t, "user", "list", "--account", "1"))); !cmp.Equal(got, []string{"1", "3"}) {
		t.Fatalf("after the removal: %v", got)
	}
	if status, _ := signIn(t, p, "ada32@example.com", typed); status == http.StatusOK {
		t.Fatal("a removed user signs in")
	}
}

// TestAdminInvites: the code invite create prints once is accepted by
// sign-up; no list shows it; revoking twice changes nothing the second
// time; a used invite is not revoked.
func TestAdminInvites(t *testing.T) {
	d := newAdminDB(t)
	d.run(t, "account", "create", "--name", "acme")
	p := testkit.StartServe(t, heraldBin, d.env, "--signup", "invite")

	join := d.run(t, "invite", "create", "--account", "1", "--email", "grace@example.com")
	own := d.run(t, "invite", "create", "--new-account", "--ttl", "1h")
	spare := d.run(t, "invite", "create", "--account", "1", "--role", "operator")
	var codes []string
	for _, inv := range []map[string]any{join, own, spare} {
		code, _ := inv["code"].(string)
		if len(code) != 20 || inv["hint"] != code[16:] {
			t.Fatalf("invite create printed %v", inv)
		}
		codes = append(codes, code)
	}
	if own["account"] != nil || join["account"] != 1.0 || spare["role"] != "operator" {
		t.Fatalf("invites %v, %v, %v", join, own, spare)
	}
	d.secret(codes...)

	r := testkit.Call(t, p.URL, "POST", "/manage/v1/signup", "", map[string]any{"email": "grace@example.com", "password": "seven silver spoons spinning", "invite": codes[0]})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("sign-up with the printed code: %d %s", r.Status, r.Body)
	}
	r = testkit.Call(t, p.URL, "POST", "/manage/v1/signup", "", map[string]any{"email": "lin@example.com", "password": "seven silver spoons spinning", "invite": strings.ToLower(codes[1]), "accountName": "lin's"})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("sign-up with a new account: %d %s", r.Status, r.Body)
	}

	all := itemsOf(t, d.run(t, "invite", "list"))
	if got := ids(all); !cmp.Equal(got, []string{"1", "2", "3"}) || all[0]["used_at"] == nil || all[2]["used_at"] != nil {
		t.Fatalf("invite list %v", all)
	}
	if got := ids(itemsOf(t, d.run(t, "invite", "list", "--account", "1"))); !cmp.Equal(got, []string{"1", "3"}) {
		t.Fatalf("invite list --account 1: %v", got)
	}

	revoked := d.run(t, "invite", "revoke", "--id", "3")
	if revoked["revoked_at"] == nil {
		t.Fatalf("invite revoke printed %v", revoked)
	}
	snap := d.snapshot(t)
	if again := d.run(t, "invite", "revoke", "--id", "3"); !cmp.Equal(again, revoked) || d.snapshot(t) != snap {
		t.Fatalf("revoking again: %v, or the database changed", again)
	}
	d.refused(t, nil, []string{"invite", "revoke", "--id", "1"}, "--id: ", "was used already", "(invite_used)")
	r = testkit.Call(t, p.URL, "POST", "/manage/v1/signup", "", map[string]any{"email": "eve@example.com", "password": "seven silver spoons spinning", "invite": codes[2]})
	if r.Status < 400 {
		t.Fatalf("sign-up with a revoked invite: %d %s", r.Status, r.Body)
	}
	if d.snapshot(t) != snap {
		t.Fatal("the refusals changed the database")
	}
}
