package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
)

// TestFeishuEndToEnd sends through a running herald serve to a fake
// Feishu: text, a Markdown card and an uploaded image to a user and to a
// group, and a refusal.
func TestFeishuEndToEnd(t *testing.T) {
	fs := fake.NewFeishu(t)
	img := fake.NewImages(t)
	e := startProviderE2E(t)
	app := fs.NewApp()
	const openID, chatID = "ou_7d8a6e6df7621556ce0d21922b676706", "oc_a0553eda9014c201e6969b478895c230"
	fs.AddUser("open_id", openID)
	fs.AddChat(chatID, true)
	fs.AddChat("oc_ffffffffffffffffffffffffffffffff", false)
	bot := e.bot(t, "feishu", string(app.Config(fs)))
	user := e.bind(t, bot, "user", openID)
	group := e.bind(t, bot, "group", chatID)
	outside := e.bind(t, bot, "group", "oc_ffffffffffffffffffffffffffffffff")

	cases := []struct {
		name  string
		body  map[string]any
		check func(m fake.FeishuMessage) bool
	}{
		{"text to a user", map[string]any{"botId": bot, "target": user, "content": "构建通过"},
			func(m fake.FeishuMessage) bool {
				return m.ReceiveIDType == "open_id" && m.MsgType == "text" && m.Text == "构建通过"
			}},
		{"markdown card to a group", map[string]any{"botId": bot, "target": group, "content": "**v42** is live", "msgType": 2},
			func(m fake.FeishuMessage) bool {
				return m.ReceiveIDType == "chat_id" && m.MsgType == "interactive" && m.Markdown == "**v42** is live"
			}},
		{"image to a group", map[string]any{"botId": bot, "target": group, "imageUrl": img.URL("/photo.jpg")},
			func(m fake.FeishuMessage) bool {
				return m.MsgType == "image" && string(m.Image) == string(img.Data("/photo.jpg"))
			}},
		{"captioned image to a user", map[string]any{"botId": bot, "target": user, "imageUrl": img.URL("/chart.png"), "content": "chart"},
			func(m fake.FeishuMessage) bool {
				return m.MsgType == "post" && m.Text == "chart" && len(m.Image) > 0
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(fs.Messages())
			status, _, data := e.push(t, c.body)
			if status != http.StatusOK || data["status"] != "SUCCESS" {
				t.Fatalf("push: %d %v", status, data)
			}
			msgs := fs.Messages()[before:]
			if len(msgs) != 1 || !c.check(msgs[0]) {
				t.Fatalf("Feishu received %+v", msgs)
			}
			if data["platformIndex"] != msgs[0].MessageID || msgs[0].UUID != data["jobId"] {
				t.Fatalf("platformIndex %v / uuid %q; message_id %q, job %v", data["platformIndex"], msgs[0].UUID, msgs[0].MessageID, data["jobId"])
			}
		})
	}
	t.Run("refused: the platform's code and text", func(t *testing.T) {
		status, body, _ := e.push(t, map[string]any{"botId": bot, "target": outside, "content": "x"})
		if status != http.StatusInternalServerError || body["error"] != "platform_failed" ||
			!strings.Contains(body["message"].(string), "230002") || !strings.Contains(body["message"].(string), "Bot/User can NOT be out of the chat") {
			t.Fatalf("push to a chat without the bot: %d %v", status, body)
		}
	})
	t.Run("a lost answer is re-sent with the uuid and delivered once", func(t *testing.T) {
		before := len(fs.Messages())
		fs.Fail(fake.FeishuOpSend, fake.FeishuFault{Drop: true, Process: true})
		status, _, data := e.push(t, map[string]any{"botId": bot, "target": user, "content": "once"})
		if status != http.StatusOK || data["status"] != "SUCCESS" || len(fs.Messages())-before != 1 || fs.Deduplicated() != 1 {
			t.Fatalf("push: %d %v; %d delivered, %d deduplicated", status, data, len(fs.Messages())-before, fs.Deduplicated())
		}
	})
	if fs.TokenFetches() != 1 {
		t.Errorf("%d token fetches, want 1 (cached)", fs.TokenFetches())
	}
	e.noSecrets(t, append(fs.IssuedTokens(), app.AppSecret)...)
}
