package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

func TestQQEndToEnd(t *testing.T) {
	qq := fake.NewQQ(t)
	appID, secret := qq.NewApp()
	images := fake.NewImages(t)
	png := fake.PNG(5)
	imgURL := images.Add("/chart.png", png, "image/png")

	s := startProviderE2E(t)
	bot := s.bot(t, "qq", string(qq.BotConfig(appID, secret)))
	user := s.bind(t, bot, "user", "E4F4AEA33253A2797FB897C50B81D7ED")
	group := s.bind(t, bot, "group", "C9F778FE6ADF9D1D1DBE395BF744A33A")
	// QQ takes pushes only as replies: the user and a group member write
	// to the bot, which hears them on QQ's gateway (its default).
	deadline := time.Now().Add(10 * time.Second)
	for !qq.Connected(appID) {
		if time.Now().After(deadline) {
			t.Fatal("herald serve did not connect to QQ's gateway within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	userMsg := qq.WriteC2C(appID, "E4F4AEA33253A2797FB897C50B81D7ED", "hi")
	groupMsg := qq.WriteGroup(appID, "C9F778FE6ADF9D1D1DBE395BF744A33A", "MEMBER", "hi")

	// A bad config is refused at bot create, naming the field and never
	// echoing the secret.
	bad := testkit.Admin(t, heraldBin, s.env, "bot", "create", "--account", s.account, "--platform", "qq", "--name", "bad",
		"--config", `{"app_id":102,"client_secret":"`+secret+`"}`)
	if bad.Code == 0 || !strings.Contains(bad.Stderr, "app_id") || strings.Contains(bad.Stderr+bad.Stdout, secret) {
		t.Fatalf("bad config: exit %d, %q", bad.Code, bad.Stderr)
	}

	sends := []struct {
		name   string
		body   map[string]any
		scene  string
		typ    int
		sha256 string
	}{
		{"text to a user", map[string]any{"target": user, "content": "hello from herald"}, "c2c", 0, ""},
		{"markdown to a group", map[string]any{"target": group, "content": "**deployed** v42", "msgType": 2}, "group", 2, ""},
		{"image to a group", map[string]any{"target": group, "imageUrl": imgURL, "msgType": 7}, "group", 7, fake.SHA256(png)},
	}
	for i, sd := range sends {
		sd.body["botId"] = bot
		r := s.send(t, sd.body)
		for r.Status == http.StatusBadRequest && r.JSON()["error"] == "no_reply_window" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // the gateway's event is on its way
			r = s.send(t, sd.body)
		}
		data, _ := r.JSON()["data"].(map[string]any)
		if r.Status != http.StatusOK || data["status"] != "SUCCESS" {
			t.Fatalf("%s: %d %s", sd.name, r.Status, r.Body)
		}
		msgs := qq.Messages()
		if len(msgs) != i+1 {
			t.Fatalf("%s: fake holds %d messages, want %d", sd.name, len(msgs), i+1)
		}
		m := msgs[i]
		replyTo := userMsg
		if sd.scene == "group" {
			replyTo = groupMsg
		}
		if m.Scene != sd.scene || m.MsgType != sd.typ || data["platformIndex"] != m.ID || m.MsgID != replyTo {
			t.Fatalf("%s: fake got %+v; answer %s", sd.name, m, r.Body)
		}
		if sd.sha256 != "" && (m.Media == nil || m.Media.SHA256 != sd.sha256) {
			t.Fatalf("%s: media %+v, want sha %s", sd.name, m.Media, sd.sha256)
		}
	}
	if n := qq.TokenFetches(); n != 1 {
		t.Fatalf("%d token fetches for three sends, want 1", n)
	}

	// A group cannot be woken up: refused before anything is queued.
	r := s.send(t, map[string]any{"botId": bot, "target": group, "content": "wake", "isWakeup": true})
	if r.Status != http.StatusBadRequest || r.JSON()["error"] != "wakeup_unsupported" {
		t.Fatalf("group wake-up: %d %s", r.Status, r.Body)
	}
	// A user who never wrote cannot be sent to: refused before anything
	// is queued, saying what to do.
	silent := s.bind(t, bot, "user", "A1B2C3D4E5F60718293A4B5C6D7E8F90")
	r = s.send(t, map[string]any{"botId": bot, "target": silent, "content": "proactive"})
	if r.Status != http.StatusBadRequest || r.JSON()["error"] != "no_reply_window" || !strings.Contains(string(r.Body), "ask the user to write to the bot") {
		t.Fatalf("a push to a user who never wrote: %d %s", r.Status, r.Body)
	}
	// A wake-up message is no reply: it goes to a user who wrote.
	r = s.send(t, map[string]any{"botId": bot, "target": user, "content": "you asked", "isWakeup": true})
	if r.Status != http.StatusOK {
		t.Fatalf("wake-up send: %d %s", r.Status, r.Body)
	}
	if m := qq.Messages(); !m[len(m)-1].IsWakeup {
		t.Fatalf("last message %+v was not a wake-up", m[len(m)-1])
	}
	s.noSecrets(t, append(qq.IssuedTokens(), secret)...)
}
