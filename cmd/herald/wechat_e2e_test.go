package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

func TestWeChatEndToEnd(t *testing.T) {
	wx := fake.NewWeChat(t)
	appID, secret := wx.NewApp()
	const openid = "oLVPpjqs9BhvzwPj5A-vTYAX3GLc"
	wx.AddFollower(appID, openid)
	images := fake.NewImages(t)
	jpg := fake.JPEG(6)
	imgURL := images.Add("/photo.jpg", jpg, "image/jpeg")

	// Images are downloaded by Herald itself: allow the loopback host.
	s := startProviderE2E(t)
	bot := s.bot(t, "wechat", string(wx.BotConfig(appID, secret)))
	user := s.bind(t, bot, "user", openid)

	// Official Accounts have no groups: refused at bind.
	g := testkit.Admin(t, heraldBin, s.env, "target", "bind", "--bot", strconv.Itoa(bot), "--type", "group", "--address", openid)
	if g.Code == 0 || !strings.Contains(g.Stderr, "wechat bots cannot send to a group target") {
		t.Fatalf("group bind: exit %d, %q", g.Code, g.Stderr)
	}

	sends := []struct {
		name    string
		body    map[string]any
		msgType string
		content string
	}{
		{"text", map[string]any{"content": "hello <wechat> & co"}, "text", "hello <wechat> & co"},
		{"markdown", map[string]any{"content": "**deployed** [v42](https://example.com/r/42)", "msgType": 2}, "text", `deployed <a href="https://example.com/r/42">v42</a>`},
		{"image", map[string]any{"imageUrl": imgURL, "msgType": 7}, "image", ""},
	}
	for i, sd := range sends {
		sd.body["botId"], sd.body["target"] = bot, user
		r := s.send(t, sd.body)
		data, _ := r.JSON()["data"].(map[string]any)
		if r.Status != http.StatusOK || data["status"] != "SUCCESS" {
			t.Fatalf("%s: %d %s", sd.name, r.Status, r.Body)
		}
		msgs := wx.Messages()
		if len(msgs) != i+1 {
			t.Fatalf("%s: fake holds %d messages, want %d", sd.name, len(msgs), i+1)
		}
		if m := msgs[i]; m.MsgType != sd.msgType || m.Content != sd.content || m.ToUser != openid {
			t.Fatalf("%s: fake got %+v", sd.name, m)
		}
	}
	if m := wx.Messages()[2]; m.Media == nil || m.Media.SHA256 != fake.SHA256(jpg) || images.Fetches("/photo.jpg") != 1 {
		t.Fatalf("image message %+v, want the uploaded bytes of the JPEG fetched once", m)
	}
	if n := wx.TokenFetches(); n != 1 {
		t.Fatalf("%d token fetches, want 1", n)
	}

	// Over 2048 bytes: 400 before anything is charged or sent.
	r := s.send(t, map[string]any{"botId": bot, "target": user, "content": strings.Repeat("好", 700)})
	if r.Status != http.StatusBadRequest || r.JSON()["error"] != "content_too_long" {
		t.Fatalf("long text: %d %s", r.Status, r.Body)
	}
	// The 48-hour window, reported with WeChat's code and a reason.
	wx.Fail(fake.WeChatFault{ErrCode: 45015, ErrMsg: "response out of time limit or subscription is canceled"})
	r = s.send(t, map[string]any{"botId": bot, "target": user, "content": "late"})
	if r.Status != http.StatusInternalServerError || !strings.Contains(string(r.Body), "45015") || !strings.Contains(string(r.Body), "48 hours") {
		t.Fatalf("outside the window: %d %s", r.Status, r.Body)
	}
	s.noSecrets(t, append(wx.IssuedTokens(), secret)...)
}
