package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
)

// TestTelegramEndToEnd sends Markdown and a photo Telegram cannot fetch by
// URL through a running herald serve to the fake Telegram.
func TestTelegramEndToEnd(t *testing.T) {
	tg := fake.NewTelegram(t)
	tg.FetchPhotos()
	img := fake.NewImages(t)
	big := fake.LargePNG(6 << 20)
	img.Add("/big.png", big, "image/png")
	e := startProviderE2E(t)
	token := tg.NewBot()
	bot := e.bot(t, "telegram", `{"token":"`+token+`","api_base":"`+tg.URL()+`"}`)
	tg.AddChat("-100777")
	group := e.bind(t, bot, "group", "-100777")

	status, _, data := e.push(t, map[string]any{"botId": bot, "target": group, "msgType": 2,
		"content": "## Release `v42`\n**fixed `bug` in parser** and ||secret|| <tag>"})
	msgs := tg.Messages()
	if status != http.StatusOK || data["status"] != "SUCCESS" || len(msgs) != 1 {
		t.Fatalf("markdown: %d %v, %d messages", status, data, len(msgs))
	}
	if m := msgs[0]; m.ParseMode != "HTML" || m.EntityProblem != "" ||
		m.Text != "<b>Release </b><code>v42</code>\n\n<b>fixed </b><code>bug</code><b> in parser</b> and <tg-spoiler>secret</tg-spoiler> &lt;tag&gt;" {
		t.Fatalf("Telegram received %q (parse_mode %q, entity problem %q)", m.Text, m.ParseMode, m.EntityProblem)
	}
	if data["platformIndex"] != fmt.Sprintf("-100777:%d", msgs[0].MessageID) {
		t.Fatalf("platformIndex %v", data["platformIndex"])
	}

	status, _, data = e.push(t, map[string]any{"botId": bot, "target": group, "imageUrl": img.URL("/big.png")})
	msgs = tg.Messages()
	if status != http.StatusOK || data["status"] != "SUCCESS" || len(msgs) != 2 || msgs[1].Photo != "" || string(msgs[1].PhotoData) != string(big) {
		t.Fatalf("photo over 5 MB: %d %v; uploaded %v", status, data, len(msgs) == 2 && msgs[1].Photo == "")
	}
	e.noSecrets(t, token)
}
