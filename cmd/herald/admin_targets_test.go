package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

// waitFor waits up to 10 s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 10 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAdminTargetInvite: the code target invite prints binds the chat of
// the Telegram user who sends it (as /start <code>, which its link sends);
// a revoked code binds nothing; the lists never show a code; a target is
// renamed.
func TestAdminTargetInvite(t *testing.T) {
	s := startAdminServe(t, nil)
	s.run(t, "bot", "update", "--id", "1", "--config", s.config(s.token, "poll"))

	inv := s.run(t, "target", "invite", "--bot", "1", "--type", "user")
	code, _ := inv["code"].(string)
	wantLink := "https://t.me/" + fake.TelegramUsername(s.tg.BotID(s.token)) + "?start=" + code
	if len(code) != 8 || inv["instruction"] != "send `bind "+code+"` to the bot" || inv["link"] != wantLink ||
		inv["hint"] != code[5:] || inv["uses_left"] != 1.0 || inv["type"] != "user" || inv["bot"] != 1.0 {
		t.Fatalf("target invite printed %v; want the code, %q and the instruction", inv, wantLink)
	}
	if _, ok := inv["qr_url"]; ok {
		t.Fatalf("target invite printed a QR link for Telegram: %v", inv)
	}
	spare := s.run(t, "target", "invite", "--bot", "1", "--ttl", "1h", "--uses", "2")
	spareCode := spare["code"].(string)
	s.secret(code, spareCode)

	user := fake.TelegramChat{ID: 5151, Type: "private", Name: "Grace"}
	s.tg.Write(s.token, user, "/start "+code)
	var bound map[string]any
	waitFor(t, "the binding", func() bool {
		for _, tg := range itemsOf(t, s.run(t, "target", "list", "--bot", "1")) {
			if tg["address"] == "5151" {
				bound = tg
				return true
			}
		}
		return false
	})
	if !cmp.Equal(bound, map[string]any{"id": 2.0, "bot": 1.0, "type": "user", "address": "5151", "name": "Grace", "presence": "active"}) {
		t.Fatalf("bound %v", bound)
	}

	codes := s.run(t, "target", "invites", "--bot", "1")
	list := itemsOf(t, codes)
	if got := ids(list); !cmp.Equal(got, []string{"1", "2"}) || list[0]["uses_left"] != 0.0 || list[0]["last_target"] != 2.0 || list[1]["uses_left"] != 2.0 {
		t.Fatalf("target invites %v", list)
	}
	revoked := s.run(t, "target", "invite-revoke", "--id", "2")
	if revoked["revoked_at"] == nil || revoked["id"] != 2.0 {
		t.Fatalf("invite-revoke printed %v", revoked)
	}
	if again := s.run(t, "target", "invite-revoke", "--id", "2"); !cmp.Equal(again, revoked) {
		t.Fatalf("revoking again printed %v, want %v", again, revoked)
	}

	other := fake.TelegramChat{ID: 6161, Type: "private", Name: "Lin"}
	s.tg.Write(s.token, other, "/start "+spareCode)
	waitFor(t, "the refusal in the chat", func() bool {
		for _, m := range s.tg.Messages() {
			if m.ChatID == "6161" {
				return strings.Contains(m.Text, "unknown, used or expired")
			}
		}
		return false
	})
	if got := ids(itemsOf(t, s.run(t, "target", "list", "--bot", "1"))); !cmp.Equal(got, []string{"1", "2"}) {
		t.Fatalf("a revoked code bound a target: %v", got)
	}

	renamed := s.run(t, "target", "rename", "--id", "2", "--name", "Grace Hopper")
	if renamed["name"] != "Grace Hopper" || renamed["address"] != "5151" {
		t.Fatalf("target rename printed %v", renamed)
	}
	if l := itemsOf(t, s.run(t, "target", "list", "--bot", "1")); l[1]["name"] != "Grace Hopper" || l[0]["name"] != "Ada" {
		t.Fatalf("target list %v", l)
	}
}

// TestServePublicURLReachesReceivers: herald serve --public-url is where
// the bots' receivers register their webhooks (Telegram's setWebhook).
func TestServePublicURLReachesReceivers(t *testing.T) {
	d := newAdminDB(t)
	tg := fake.NewTelegram(t)
	token := tg.NewBot()
	d.run(t, "account", "create", "--name", "acme")
	d.run(t, "bot", "create", "--account", "1", "--platform", "telegram", "--name", "hooks",
		"--config", `{"token":"`+token+`","api_base":"`+tg.URL()+`","receive":"webhook"}`)
	const public = "http://127.0.0.1:9/herald"
	testkit.StartServe(t, heraldBin, d.env, "--public-url", public+"/")
	want := public + "/api/hooks/1"
	waitFor(t, "the webhook set at the public URL", func() bool { return tg.Webhook(token) == want })
	if tg.WebhookSecret(token) == "" {
		t.Fatal("the webhook was set without a secret_token")
	}
}

// TestAdminJobList: job list pages newest first; each filter and the
// cursor pages agree with what job show prints of each job.
func TestAdminJobList(t *testing.T) {
	s := startAdminServe(t, nil, "--pacing=false")
	s.tg.AddChat("5151")
	s.run(t, "target", "bind", "--bot", "1", "--type", "user", "--address", "5151")
	s.run(t, "account", "create", "--name", "other")
	type sent struct {
		id     string
		target int
	}
	var jobs []sent // oldest first
	for i := range 7 {
		target := 1 + i%2
		status, data := s.send(t, target, fmt.Sprint("job ", i), "Idempotency-Key", fmt.Sprint("k-", i))
		if status != 200 {
			t.Fatalf("send %d: %d %v", i, status, data)
		}
		jobs = append(jobs, sent{data["jobId"].(string), target})
		time.Sleep(2 * time.Millisecond) // no two jobs made in one millisecond: the time filters cut between them
	}
	newestFirst := func(keep func(i int) bool) []string {
		out := []string{}
		for i := len(jobs) - 1; i >= 0; i-- {
			if keep(i) {
				out = append(out, jobs[i].id)
			}
		}
		return out
	}
	all := s.run(t, "job", "list")
	if all["next"] != "" {
		t.Fatalf("one page of 7 jobs has a next cursor: %v", all["next"])
	}
	list := itemsOf(t, all)
	if got := ids(list); !cmp.Equal(got, newestFirst(func(int) bool { return true })) {
		t.Fatalf("job list %v", got)
	}
	// Each item is what job show prints, with its account.
	for _, item := range list {
		shown := s.run(t, "job", "show", "--id", item["jobId"].(string))
		shown["accountId"] = 1.0
		if diff := cmp.Diff(shown, item); diff != "" {
			t.Fatalf("job list item and job show differ (-show +list):\n%s", diff)
		}
	}
	cut := list[3]["createdAt"].(string) // jobs[3]
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"account", []string{"--account", "1"}, newestFirst(func(int) bool { return true })},
		{"other account", []string{"--account", "2"}, []string{}},
		{"state", []string{"--state", "succeeded"}, newestFirst(func(int) bool { return true })},
		{"no such state", []string{"--state", "uncertain"}, []string{}},
		{"bot", []string{"--bot", "1"}, newestFirst(func(int) bool { return true })},
		{"target", []string{"--target", "2"}, newestFirst(func(i int) bool { return jobs[i].target == 2 })},
		{"key", []string{"--key", "k-4"}, []string{jobs[4].id}},
		{"since", []string{"--since", cut}, newestFirst(func(i int) bool { return i >= 3 })},
		{"until", []string{"--until", cut}, newestFirst(func(i int) bool { return i < 3 })},
		{"since and until", []string{"--since", list[5]["createdAt"].(string), "--until", cut, "--target", "2"}, newestFirst(func(i int) bool { return i == 1 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.run(t, append([]string{"job", "list"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, ids(itemsOf(t, got))); diff != "" {
				t.Fatalf("job list %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
	t.Run("pages", func(t *testing.T) {
		var paged []string
		cursor := ""
		for page := 0; ; page++ {
			args := []string{"job", "list", "--limit", "3"}
			if cursor != "" {
				args = append(args, "--cursor", cursor)
			}
			out := s.run(t, args...)
			items := itemsOf(t, out)
			if len(items) > 3 || page > 3 {
				t.Fatalf("page %d: %d items", page, len(items))
			}
			for i, it := range items {
				if diff := cmp.Diff(list[len(paged)+i], it); diff != "" {
					t.Fatalf("page %d item %d differs from the whole list:\n%s", page, i, diff)
				}
			}
			paged = append(paged, ids(items)...)
			cursor, _ = out["next"].(string)
			if cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(ids(list), paged); diff != "" {
			t.Fatalf("pages (-whole +pages):\n%s", diff)
		}
	})
}

// TestWorkerPublicURLReachesReceivers: a herald worker of a scale-out
// installation runs the bots' receivers too, so it takes --public-url and
// registers webhooks under it (without one it could hold a webhook bot's
// receiver and never set its webhook).
func TestWorkerPublicURLReachesReceivers(t *testing.T) {
	pg := testkit.PostgresURL(t)
	c := newScaleOut(t, pg, pg, testkit.RedisURL(t))
	token := c.tg.NewBot()
	b := testkit.MustAdmin(t, heraldBin, c.env, "bot", "create", "--account", c.account, "--platform", "telegram", "--name", "hooks",
		"--config", `{"token":"`+token+`","api_base":"`+c.tg.URL()+`","receive":"webhook"}`)
	const public = "https://herald.example.com"
	c.worker(t, "--workers", "1", "--public-url", public)
	want := fmt.Sprint(public, "/api/hooks/", b["id"])
	waitFor(t, "the webhook set by the worker", func() bool { return c.tg.Webhook(token) == want })

	out, err := exec.Command(heraldBin, "worker", "--db", pg, "--redis", testkit.RedisURL(t), "--public-url", "herald.example.com").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--public-url") {
		t.Fatalf("worker with a relative --public-url: %v: %s", err, out)
	}
}
