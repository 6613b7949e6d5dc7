package transport_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestHostileImageURLs sends image URLs that point inside the network to
// platforms for which Herald downloads images: each is refused with 400,
// and nothing is charged, queued or sent. (The testkit allows loopback
// image hosts for its own image servers; loopback refusals are proven in
// the imagefetch tests.)
func TestHostileImageURLs(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	fs := fake.NewFeishu(t)
	app := fs.NewApp()
	fs.AddUser("open_id", "ou_7d8a6e6df7621556ce0d21922b676706")
	fb, err := h.Engine.Bots().Create(t.Context(), push.System(), push.Bot{AccountID: f.Account.ID, Platform: "feishu", Name: "fs", Config: json.RawMessage(app.Config(fs))})
	if err != nil {
		t.Fatal(err)
	}
	ft, err := h.Engine.Targets().Bind(t.Context(), push.System(), push.Target{BotID: fb.ID, Type: push.TargetUser, Address: "ou_7d8a6e6df7621556ce0d21922b676706"})
	if err != nil {
		t.Fatal(err)
	}
	before := h.Balance(t, f.Account.ID)
	for _, dest := range []struct{ bot, target int64 }{{f.Bot.ID, f.Target.ID}, {fb.ID, ft.ID}} {
		for _, u := range []string{
			"http://169.254.169.254/latest/meta-data/iam/",
			"http://10.0.0.5/admin.png",
			"http://192.168.1.1/a.png",
			"http://[fd00:ec2::254]/a.png",
			"gopher://example.com/x",
			"https://user:hunter2@example.com/a.png",
		} {
			r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": dest.bot, "target": itoa(dest.target), "imageUrl": u})
			var e errAnswer
			r.Decode(t, &e)
			if r.Status != 400 || (e.Error != "image_url_refused" && e.Error != "invalid_image_url") || strings.Contains(e.Message, "hunter2") {
				t.Errorf("bot %d, imageUrl %s: %d %s", dest.bot, u, r.Status, r.Body)
			}
		}
	}
	if h.CountJobs(t) != 0 || h.Balance(t, f.Account.ID) != before || h.Telegram.Requests() != 0 || len(fs.Uploads()) != 0 || len(fs.Messages()) != 0 {
		t.Fatalf("refused images: %d jobs, balance %d (was %d), telegram %d requests, feishu %d uploads and %d messages",
			h.CountJobs(t), h.Balance(t, f.Account.ID), before, h.Telegram.Requests(), len(fs.Uploads()), len(fs.Messages()))
	}
}
