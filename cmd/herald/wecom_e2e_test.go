package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
)

// TestWeComEndToEnd sends through a running herald serve to a fake WeCom:
// text, Markdown and an uploaded image to a member through an app, text
// to an app group chat, text through a group robot, and a refusal.
func TestWeComEndToEnd(t *testing.T) {
	wc := fake.NewWeCom(t)
	img := fake.NewImages(t)
	e := startProviderE2E(t)
	app := wc.NewApp()
	wc.AddUser(app.CorpID, "lisi", fake.WeComActive)
	wc.AddChat(app.CorpID, "opsroom")
	appBot := e.bot(t, "wecom", string(app.Config(wc)))
	user := e.bind(t, appBot, "user", "lisi")
	chat := e.bind(t, appBot, "group", "opsroom")
	stranger := e.bind(t, appBot, "user", "wangwu")
	robotKey := wc.NewRobot()
	robotBot := e.bot(t, "wecom", string(wc.RobotConfig(robotKey)))
	robot := e.bind(t, robotBot, "group", "robot")

	cases := []struct {
		name  string
		body  map[string]any
		via   string
		check func(m fake.WeComMessage) bool
		msgid bool
	}{
		{"text to a member", map[string]any{"botId": appBot, "target": user, "content": "部署完成"}, "app",
			func(m fake.WeComMessage) bool {
				return m.MsgType == "text" && m.Content == "部署完成" && m.ToUser == "lisi"
			}, true},
		{"markdown to a member", map[string]any{"botId": appBot, "target": user, "content": "**v42** ![c](https://e.com/c.png)", "msgType": 2}, "app",
			func(m fake.WeComMessage) bool {
				return m.MsgType == "markdown" && m.Content == "**v42** [c](https://e.com/c.png)"
			}, true},
		{"image to a member", map[string]any{"botId": appBot, "target": user, "imageUrl": img.URL("/chart.png")}, "app",
			func(m fake.WeComMessage) bool {
				return m.MsgType == "image" && string(m.Image) == string(img.Data("/chart.png"))
			}, true},
		{"text to an app group chat", map[string]any{"botId": appBot, "target": chat, "content": "hello room"}, "appchat",
			func(m fake.WeComMessage) bool { return m.ChatID == "opsroom" && m.Content == "hello room" }, false},
		{"text through a group robot", map[string]any{"botId": robotBot, "target": robot, "content": "robot here"}, "robot",
			func(m fake.WeComMessage) bool { return m.RobotKey == robotKey && m.Content == "robot here" }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(wc.Messages())
			status, _, data := e.push(t, c.body)
			if status != http.StatusOK || data["status"] != "SUCCESS" {
				t.Fatalf("push: %d %v", status, data)
			}
			msgs := wc.Messages()[before:]
			if len(msgs) != 1 || msgs[0].Via != c.via || !c.check(msgs[0]) {
				t.Fatalf("WeCom received %+v", msgs)
			}
			if got := data["platformIndex"]; (got != "" && got == msgs[0].MsgID) != c.msgid {
				t.Fatalf("platformIndex %v, msgid %q", got, msgs[0].MsgID)
			}
		})
	}
	t.Run("refused: the platform's code and text", func(t *testing.T) {
		status, body, _ := e.push(t, map[string]any{"botId": appBot, "target": stranger, "content": "x"})
		if status != http.StatusInternalServerError || body["error"] != "platform_failed" ||
			!strings.Contains(body["message"].(string), "81013") || !strings.Contains(body["message"].(string), "user & party & tag all invalid") {
			t.Fatalf("push to an unknown member: %d %v", status, body)
		}
	})
	t.Run("text over 2048 bytes is refused before sending", func(t *testing.T) {
		sends := wc.Requests(fake.WeComOpSend)
		status, body, _ := e.push(t, map[string]any{"botId": appBot, "target": user, "content": strings.Repeat("字", 700)})
		if status != http.StatusBadRequest || body["error"] != "content_too_long" || wc.Requests(fake.WeComOpSend) != sends {
			t.Fatalf("long text: %d %v", status, body)
		}
	})
	if wc.TokenFetches() != 1 {
		t.Errorf("%d token fetches, want 1 (cached)", wc.TokenFetches())
	}
	e.noSecrets(t, append(wc.IssuedTokens(), app.Secret, robotKey)...)
}
