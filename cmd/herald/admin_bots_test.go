package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

// adminServe is a herald serve on an admin database with a fake Telegram,
// an account, its API key, a Telegram bot and a target, all made with
// herald admin.
type adminServe struct {
	*adminDB
	p     *testkit.Process
	tg    *fake.Telegram
	key   string
	token string
}

func startAdminServe(t *testing.T, env []string, args ...string) *adminServe {
	t.Helper()
	s := &adminServe{adminDB: newAdminDB(t, env...), tg: fake.NewTelegram(t)}
	s.token = s.tg.NewBot()
	s.secret(s.token, strings.Split(s.token, ":")[1])
	s.p = testkit.StartServe(t, heraldBin, s.env, args...)
	s.run(t, "account", "create", "--name", "acme")
	s.key = s.run(t, "key", "create", "--account", "1")["key"].(string)
	s.run(t, "bot", "create", "--account", "1", "--platform", "telegram", "--name", "alerts", "--config", s.config(s.token, ""))
	s.tg.AddChat("4242")
	s.run(t, "target", "bind", "--bot", "1", "--type", "user", "--address", "4242", "--name", "Ada")
	return s
}

// config is a Telegram bot config with the fake's address.
func (s *adminServe) config(token, receive string) string {
	if receive != "" {
		return `{"token":"` + token + `","api_base":"` + s.tg.URL() + `","receive":"` + receive + `"}`
	}
	return `{"token":"` + token + `","api_base":"` + s.tg.URL() + `"}`
}

// send sends text to a target of bot 1 through the send API and returns
// the status and the answer's data.
func (s *adminServe) send(t *testing.T, target int, text string, header ...string) (int, map[string]any) {
	t.Helper()
	r := testkit.Call(t, s.p.URL, "POST", "/openapi/v1/push/private", s.key, map[string]any{"botId": 1, "target": fmt.Sprint(target), "content": text}, header...)
	data, _ := r.JSON()["data"].(map[string]any)
	return r.Status, data
}

// tokenOf returns the token the fake Telegram received text with.
func (s *adminServe) tokenOf(t *testing.T, text string) string {
	t.Helper()
	for _, m := range s.tg.Messages() {
		if m.Text == text {
			return m.Token
		}
	}
	t.Fatalf("Telegram received no %q", text)
	return ""
}

// TestAdminBotUpdate: new credentials given with bot update are what the
// next sends use; a malformed config is refused and the sends go on with
// the current token, and so are credentials Telegram refuses when they are
// verified; the bot is renamed; the saved token verifies; no output shows
// a token.
func TestAdminBotUpdate(t *testing.T) {
	s := startAdminServe(t, nil, "--pacing=false")
	if status, _ := s.send(t, 1, "first"); status != http.StatusOK || s.tokenOf(t, "first") != s.token {
		t.Fatalf("first send: %d", status)
	}
	newToken := s.tg.NewBot()
	s.secret(newToken, strings.Split(newToken, ":")[1])
	got := s.run(t, "bot", "update", "--id", "1", "--verify", "--config", s.config(newToken, ""), "--name", "alerts-2")
	if !cmp.Equal(got, map[string]any{"id": 1.0, "account": 1.0, "platform": "telegram", "name": "alerts-2", "verified": true}) {
		t.Fatalf("bot update printed %v", got)
	}
	// Another process changed the bot: serve sees it within a second.
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; ; i++ {
		text := fmt.Sprint("after the update ", i)
		if status, _ := s.send(t, 1, text); status != http.StatusOK {
			t.Fatalf("send after the update: %d", status)
		}
		if s.tokenOf(t, text) == newToken {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sends still use the old token 5 s after bot update")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, bad := range []string{`{"token":"bad","api_base":"` + s.tg.URL() + `"}`, `{"token":`, `{"tokn":"x"}`} {
		snap := s.snapshot(t)
		s.refused(t, nil, []string{"bot", "update", "--id", "1", "--config", bad}, "--config: ", "(invalid_config)")
		if s.snapshot(t) != snap {
			t.Fatalf("the refused config %s changed the database", bad)
		}
	}
	// A token Telegram does not know, with --verify: refused, nothing
	// saved.
	wrong := strings.Split(newToken, ":")[0] + ":" + strings.Repeat("w", 35)
	s.secret(strings.Repeat("w", 35))
	snap := s.snapshot(t)
	s.refused(t, nil, []string{"bot", "update", "--id", "1", "--verify", "--config", s.config(wrong, "")}, "Telegram refused the bot token", "(credentials_refused)")
	if s.snapshot(t) != snap {
		t.Fatal("the refused credentials changed the database")
	}
	time.Sleep(1100 * time.Millisecond) // past serve's recheck of the catalog
	if status, _ := s.send(t, 1, "after the refusal"); status != http.StatusOK || s.tokenOf(t, "after the refusal") != newToken {
		t.Fatalf("after the refused update: %d, token changed", status)
	}
	if list := itemsOf(t, s.run(t, "bot", "list", "--account", "1")); len(list) != 1 || list[0]["name"] != "alerts-2" {
		t.Fatalf("bot list %v", list)
	}
	if v := s.run(t, "bot", "verify", "--id", "1"); !cmp.Equal(v, map[string]any{"id": 1.0, "verified": true}) {
		t.Fatalf("bot verify printed %v", v)
	}
	if out := s.p.Output(); strings.Contains(out, s.token) || strings.Contains(out, newToken) {
		t.Fatal("herald serve logged a bot token")
	}
}

// TestAdminDeleteAndUnbind: unbinding the target or deleting the bot
// while a send holds the worker cancels the jobs queued behind it and
// returns their points; the running one finishes; later sends are 404.
func TestAdminDeleteAndUnbind(t *testing.T) {
	for _, tt := range []struct {
		name, reason string
		args         []string
	}{
		{"target unbind", "target_not_found", []string{"target", "unbind", "--id", "1"}},
		{"bot delete", "bot_not_found", []string{"bot", "delete", "--id", "1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startAdminServe(t, []string{"HERALD_POINTS=true"}, "--workers", "1", "--sync-wait", "20ms")
			s.tg.Block()
			status, data := s.send(t, 1, "held")
			if status != http.StatusAccepted {
				t.Fatalf("the held send: %d %v", status, data)
			}
			held := data["jobId"].(string)
			select {
			case <-s.tg.Arrived():
			case <-time.After(10 * time.Second):
				t.Fatal("the first send did not reach Telegram")
			}
			var queued []string
			for i := range 3 {
				status, data := s.send(t, 1, fmt.Sprint("queued ", i))
				if status != http.StatusAccepted {
					t.Fatalf("queued send: %d %v", status, data)
				}
				queued = append(queued, data["jobId"].(string))
			}
			if a := s.run(t, "account", "show", "--id", "1"); a["points"] != 96.0 {
				t.Fatalf("balance %v after 4 sends", a["points"])
			}
			if got := s.run(t, tt.args...); !cmp.Equal(got, map[string]any{"id": 1.0, "canceled": 3.0}) {
				t.Fatalf("%s printed %v", tt.name, got)
			}
			s.tg.Unblock()
			for _, id := range queued {
				if j := s.run(t, "job", "show", "--id", id); j["status"] != "canceled" {
					t.Fatalf("queued job %s is %v", id, j["status"])
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for s.run(t, "job", "show", "--id", held)["status"] != "succeeded" {
				if time.Now().After(deadline) {
					t.Fatal("the running send did not finish")
				}
				time.Sleep(100 * time.Millisecond)
			}
			if a := s.run(t, "account", "show", "--id", "1"); a["points"] != 99.0 {
				t.Fatalf("balance %v; want 99 (the canceled jobs' points returned)", a["points"])
			}
			if n := len(s.tg.Messages()); n != 1 {
				t.Fatalf("Telegram received %d messages; want only the held one", n)
			}
			time.Sleep(1100 * time.Millisecond) // past serve's recheck of the catalog
			r := testkit.Call(t, s.p.URL, "POST", "/openapi/v1/push/private", s.key, map[string]any{"botId": 1, "target": "1", "content": "late"})
			if r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), tt.reason) {
				t.Fatalf("a send after %s: %d %s", tt.name, r.Status, r.Body)
			}
			// Again: nothing more to cancel, and refused.
			s.refused(t, nil, tt.args, "--id: ", "("+tt.reason+")")
			if a := s.run(t, "account", "show", "--id", "1"); a["points"] != 99.0 {
				t.Fatalf("balance %v after a second %s", a["points"], tt.name)
			}
		})
	}
}

// TestAdminBotCreateVerify: bot create --verify asks Telegram first: a
// token it refuses exits 1 and makes no bot, a token it knows makes the
// bot and prints verified true.
func TestAdminBotCreateVerify(t *testing.T) {
	d := newAdminDB(t)
	tg := fake.NewTelegram(t)
	d.run(t, "account", "create", "--name", "acme")
	wrongSecret := strings.Repeat("w", 35)
	d.secret(wrongSecret)
	wrong := `{"token":"7000000999:` + wrongSecret + `","api_base":"` + tg.URL() + `"}`
	d.refused(t, nil, []string{"bot", "create", "--account", "1", "--platform", "telegram", "--name", "alerts", "--config", wrong, "--verify"},
		"Telegram refused the bot token", "(credentials_refused)")
	if list := itemsOf(t, d.run(t, "bot", "list", "--account", "1")); len(list) != 0 {
		t.Fatalf("the refused bot was made: %v", list)
	}
	token := tg.NewBot()
	d.secret(strings.Split(token, ":")[1])
	got := d.run(t, "bot", "create", "--account", "1", "--platform", "telegram", "--name", "alerts", "--config", `{"token":"`+token+`","api_base":"`+tg.URL()+`"}`, "--verify")
	if !cmp.Equal(got, map[string]any{"id": 1.0, "account": 1.0, "platform": "telegram", "name": "alerts", "verified": true}) {
		t.Fatalf("bot create --verify printed %v", got)
	}
}

// TestAdminJobResolve: herald admin job resolve settles an uncertain job,
// drops its "check it, then resolve" error and prints who resolved it,
// when, and the note.
func TestAdminJobResolve(t *testing.T) {
	s := startAdminServe(t, nil, "--sync-wait", "2s")
	s.tg.DropNext(1)
	status, data := s.send(t, 1, "answer lost")
	if status != http.StatusAccepted || data["uncertain"] != true {
		t.Fatalf("dropped send: %d %v", status, data)
	}
	id := data["jobId"].(string)
	if j := s.run(t, "job", "show", "--id", id); !strings.Contains(fmt.Sprint(j["error"]), "check it, then resolve") {
		t.Fatalf("uncertain job: %v", j)
	}
	j := s.run(t, "job", "resolve", "--id", id, "--outcome", "succeeded", "--note", "seen in the chat")
	shown := s.run(t, "job", "show", "--id", id)
	for _, got := range []map[string]any{j, shown} {
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(got["resolvedAt"]))
		if got["status"] != "succeeded" || got["error"] != nil || got["resolvedBy"] != "system" || err != nil || time.Since(at) > time.Minute || got["note"] != "seen in the chat" {
			t.Errorf("resolved job: %v; want succeeded, no error, resolvedBy system (the admin command), resolvedAt now, the note", got)
		}
	}
}
