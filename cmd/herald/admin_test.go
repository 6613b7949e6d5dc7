package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

func TestAdminSurface(t *testing.T) {
	db := filepath.Join(t.TempDir(), "admin.db")
	env := []string{"HERALD_DB=" + db}
	tg := fake.NewTelegram(t)
	run := func(args ...string) map[string]any {
		t.Helper()
		return testkit.MustAdmin(t, heraldBin, env, args...)
	}
	check := func(got, want map[string]any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("output (-want +got):\n%s", diff)
		}
	}
	account := map[string]any{"id": 1.0, "name": "acme", "points": 100.0, "status": "active"}
	check(run("account", "create", "--name", "acme"), account)
	check(run("account", "show", "--id", "1"), account)
	check(run("account", "suspend", "--id", "1"), map[string]any{"id": 1.0, "name": "acme", "points": 100.0, "status": "suspended"})
	check(run("account", "activate", "--id", "1"), account)
	check(run("points", "set", "--account", "1", "--balance", "7"), map[string]any{"id": 1.0, "name": "acme", "points": 7.0, "status": "active"})
	run("account", "create", "--name", "second")
	list := run("account", "list")
	if items := list["items"].([]any); len(items) != 2 {
		t.Fatalf("account list = %v", list)
	}

	key := run("key", "create", "--account", "1")
	plain, _ := key["key"].(string)
	check(key, map[string]any{"id": 1.0, "account": 1.0, "key": plain})
	if !strings.HasPrefix(plain, "hrd_") || len(plain) < 4+32 {
		t.Fatalf("key %q: want hrd_ and at least 32 characters", plain)
	}
	run("key", "create", "--account", "1", "--expires", "720h")
	keys := run("key", "list", "--account", "1")
	raw, _ := json.Marshal(keys)
	if strings.Contains(string(raw), plain) || strings.Contains(string(raw), plain[4:]) {
		t.Fatalf("key list shows the secret: %s", raw)
	}
	items := keys["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["expires_at"] != nil || items[1].(map[string]any)["expires_at"] == nil {
		t.Fatalf("key list = %s", raw)
	}
	check(run("key", "revoke", "--id", "1"), map[string]any{"id": 1.0, "revoked": true})

	token := tg.NewBot()
	cfg := `{"token":"` + token + `","api_base":"` + tg.URL() + `"}`
	bot := run("bot", "create", "--account", "1", "--platform", "telegram", "--name", "alerts", "--config", cfg)
	check(bot, map[string]any{"id": 1.0, "account": 1.0, "platform": "telegram", "name": "alerts"})
	check(run("bot", "list", "--account", "1"), map[string]any{"items": []any{bot}})
	target := run("target", "bind", "--bot", "1", "--type", "user", "--address", "4242", "--name", "Ada")
	check(target, map[string]any{"id": 1.0, "bot": 1.0, "type": "user", "address": "4242", "name": "Ada", "presence": "active"})
	check(run("target", "list", "--bot", "1"), map[string]any{"items": []any{target}})

	// No output anywhere carries the bot token.
	for _, args := range [][]string{{"bot", "list", "--account", "1"}, {"account", "list"}, {"target", "list", "--bot", "1"}, {"bot", "update", "--id", "1", "--config", cfg}} {
		r := testkit.Admin(t, heraldBin, env, args...)
		if strings.Contains(r.Stdout+r.Stderr, token) || strings.Contains(r.Stdout+r.Stderr, strings.Split(token, ":")[1]) {
			t.Fatalf("admin %v printed the bot token", args)
		}
	}
}

func TestAdminErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "admin.db")
	env := []string{"HERALD_DB=" + db}
	testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", "acme")
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"account", "show", "--id", "9"}, "account 9 does not exist"},
		{[]string{"account", "create", "--name", ""}, "account name is empty"},
		{[]string{"account", "frobnicate"}, "unknown command"},
		{[]string{"key", "create"}, "--account is required"},
		{[]string{"key", "revoke", "--id", "5"}, "does not exist"},
		{[]string{"bot", "create", "--account", "1", "--platform", "nope", "--name", "x"}, `platform "nope" is not known`},
		{[]string{"bot", "create", "--account", "1", "--platform", "telegram", "--name", "x", "--config", `{"token":"bad"}`}, "token is malformed"},
		{[]string{"bot", "create", "--account", "1", "--platform", "telegram", "--name", "x", "--config", `{"tokn":"x"}`}, "unknown field"},
		{[]string{"bot", "create", "--account", "1", "--platform", "telegram", "--name", "x", "--config", `not json`}, "not valid JSON"},
		{[]string{"target", "bind", "--bot", "7", "--type", "user", "--address", "1"}, "bot 7 does not exist"},
		{[]string{"points", "set", "--account", "1", "--balance", "-3"}, "--balance is required"},
		{[]string{"job", "show", "--id", "nope"}, "is not a job id"},
		{[]string{"job", "show", "--id", "0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10"}, "does not exist"},
		{[]string{"job", "resolve", "--id", "0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10", "--outcome", "queued"}, "succeeded or failed"},
		{[]string{"account", "create", "--name", "x", "--bogus"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		r := testkit.Admin(t, heraldBin, env, tt.args...)
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("admin %v: exit %d, stdout %q, stderr %q; want exit 1 and %q on stderr", tt.args, r.Code, r.Stdout, r.Stderr, tt.want)
		}
	}
}

func TestAdminEnvTwinAndFlag(t *testing.T) {
	dir := t.TempDir()
	envDB, flagDB := filepath.Join(dir, "env.db"), filepath.Join(dir, "flag.db")
	env := []string{"HERALD_DB=" + envDB, "HERALD_INITIAL_POINTS=5"}
	a := testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", "a")
	if a["points"] != 5.0 {
		t.Fatalf("HERALD_INITIAL_POINTS=5 gave %v points", a["points"])
	}
	// The flag wins over the environment.
	testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", "b", "--db", flagDB)
	envList := testkit.MustAdmin(t, heraldBin, env, "account", "list")
	flagList := testkit.MustAdmin(t, heraldBin, env, "account", "list", "--db", flagDB)
	if len(envList["items"].([]any)) != 1 || len(flagList["items"].([]any)) != 1 {
		t.Fatalf("env db %v, flag db %v; want one account in each", envList, flagList)
	}
}
