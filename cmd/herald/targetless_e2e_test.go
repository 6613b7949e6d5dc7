package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

// received reports how many messages a fake platform has accepted and
// what the last one said (the relevant text field of each platform).
type received func() (int, string)

// last is the received of a fake whose accepted messages list returns.
func last[M any](list func() []M, text func(M) string) received {
	return func() (int, string) {
		m := list()
		if len(m) == 0 {
			return 0, ""
		}
		return len(m), text(m[len(m)-1])
	}
}

// targetlessBot is a bot of a platform without targets, and how to read
// what its fake platform received.
type targetlessBot struct {
	platform string
	config   map[string]any
	received received
}

// TestServeTargetless runs herald serve with one bot on every push relay
// and workplace webhook (each on its fake service), and sends to each with
// the target left out, on both single-send endpoints.
func TestServeTargetless(t *testing.T) {
	env := []string{"HERALD_DB=" + filepath.Join(t.TempDir(), "h.db")}
	p := testkit.StartServe(t, heraldBin, env, "--points")
	admin := func(args ...string) map[string]any { return testkit.MustAdmin(t, heraldBin, env, args...) }
	account := fmt.Sprint(admin("account", "create", "--name", "acme")["id"])
	key := admin("key", "create", "--account", account)["key"].(string)

	ntfy, gotify, bark := fake.NewNtfy(t), fake.NewGotify(t), fake.NewBark(t)
	sc, pp, ding, hooks := fake.NewServerChan(t), fake.NewPushPlus(t), fake.NewDingTalk(t), fake.NewSlack(t)
	dingToken, dingSecret := ding.NewRobot(fake.DingTalkSecurity{Sign: true, Keywords: []string{"herald"}})
	bots := []targetlessBot{
		{"ntfy", map[string]any{"server": ntfy.URL(), "topic": "alerts"},
			last(ntfy.Messages, func(m fake.NtfyMessage) string { return m.Message })},
		{"gotify", map[string]any{"server": gotify.URL(), "token": gotify.NewApp("herald")},
			last(gotify.Messages, func(m fake.GotifyMessage) string { return m.Message })},
		{"bark", map[string]any{"server": bark.URL(), "device_key": bark.NewDevice()},
			last(bark.Pushes, func(m fake.BarkPush) string { return m.Body + m.Markdown })},
		{"serverchan", map[string]any{"sendkey": sc.NewSendKey(), "api_base": sc.URL()},
			last(sc.Messages, func(m fake.ServerChanMessage) string { return m.Desp })},
		{"pushplus", map[string]any{"token": pp.NewToken(), "api_base": pp.URL()},
			last(pp.Messages, func(m fake.PushPlusMessage) string { return m.Content })},
		{"dingtalk", map[string]any{"access_token": dingToken, "secret": dingSecret, "keywords": []string{"herald"}, "api_base": ding.URL()},
			last(ding.Messages, func(m fake.DingTalkMessage) string { return m.Content + m.Text })},
	}
	for _, fl := range []string{"slack", "mattermost", "rocketchat"} {
		hook := hooks.NewHook(fl)
		bots = append(bots, targetlessBot{"slack", map[string]any{"webhook_url": hook, "flavor": fl}, func() (int, string) {
			n, text := 0, ""
			for _, m := range hooks.Messages() {
				if hook == hooks.URL()+m.Path {
					n, text = n+1, m.Text
				}
			}
			return n, text
		}})
	}

	sends := 0
	for _, b := range bots {
		cfg, _ := json.Marshal(b.config)
		bot := admin("bot", "create", "--account", account, "--platform", b.platform, "--name", b.platform, "--config", string(cfg))
		id := int64(bot["id"].(float64))
		name := fmt.Sprintf("%s/%v", b.platform, b.config["flavor"])
		t.Run(name, func(t *testing.T) {
			// A target cannot be bound to such a bot.
			r := testkit.Admin(t, heraldBin, env, "target", "bind", "--bot", fmt.Sprint(id), "--type", "group", "--address", "x")
			if r.Code == 0 || !strings.Contains(r.Stderr, "has no targets") {
				t.Errorf("target bind: exit %d %q", r.Code, r.Stderr)
			}
			// 4.1 without a target, Markdown.
			res := testkit.Call(t, p.URL, "POST", "/openapi/v1/push/private", key,
				map[string]any{"botId": id, "content": "**herald** deployed v42", "msgType": 2}, "Idempotency-Key", fmt.Sprintf("e2e-%d", id))
			d, _ := res.JSON()["data"].(map[string]any)
			if res.Status != http.StatusOK || d["status"] != "SUCCESS" {
				t.Fatalf("4.1: %d %s", res.Status, res.Body)
			}
			if n, text := b.received(); n != 1 || !strings.Contains(text, "herald") || !strings.Contains(text, "deployed v42") {
				t.Fatalf("after 4.1 the platform has %d messages, the last %q", n, text)
			}
			j := testkit.MustAdmin(t, heraldBin, env, "job", "show", "--id", d["jobId"].(string))
			if j["status"] != "succeeded" || j["targetId"] != nil || j["platformIndex"] != d["platformIndex"] {
				t.Fatalf("admin job show: %v", j)
			}
			// 4.2 without a target_id, text; a replay of 4.1 sends nothing.
			res = testkit.Call(t, p.URL, "POST", "/openapi/send", key, map[string]any{"bot_id": id, "content": "herald says hi"})
			if res.Status != http.StatusOK || res.JSON()["data"].(map[string]any)["status"] != "SUCCESS" {
				t.Fatalf("4.2: %d %s", res.Status, res.Body)
			}
			res = testkit.Call(t, p.URL, "POST", "/openapi/v1/push/private", key,
				map[string]any{"botId": id, "target": "", "content": "**herald** deployed v42", "msgType": 2}, "Idempotency-Key", fmt.Sprintf("e2e-%d", id))
			if res.Status != http.StatusOK || res.Header.Get("Idempotency-Replay") != "true" {
				t.Fatalf("replay: %d %s", res.Status, res.Body)
			}
			if n, text := b.received(); n != 2 || !strings.Contains(text, "herald says hi") {
				t.Fatalf("after 4.2 and a replay the platform has %d messages, the last %q", n, text)
			}
			// A target, or a batch, is refused.
			res = testkit.Call(t, p.URL, "POST", "/openapi/v1/push/private", key, map[string]any{"botId": id, "target": "1", "content": "herald"})
			if res.Status != http.StatusBadRequest || res.JSON()["error"] != "platform_has_no_targets" {
				t.Fatalf("with a target: %d %s", res.Status, res.Body)
			}
			res = testkit.Call(t, p.URL, "POST", "/openapi/batch-send", key, map[string]any{"bot_id": id, "target_ids": []int{1}, "content": "herald"})
			if res.Status != http.StatusBadRequest || res.JSON()["error"] != "use_single_send" {
				t.Fatalf("batch-send: %d %s", res.Status, res.Body)
			}
		})
		sends += 2
	}
	a := admin("account", "show", "--id", account)
	if a["points"] != float64(100-sends) {
		t.Fatalf("points %v after %d sends, want %d", a["points"], sends, 100-sends)
	}
}
