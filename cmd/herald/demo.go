package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// demoStop is one platform of the demo: a fake of its real API on
// loopback, a bot on it, and the messages sent through it.
type demoStop struct {
	platform string
	what     string
	config   json.RawMessage
	target   string // the platform's address of the target; empty: no target
	sends    []map[string]any
	received func() []string // what the fake received, one line each
}

// demo runs a whole Herald in this process against fakes of several
// platforms' APIs on loopback, seeds an account, a key, bots and targets,
// sends text, Markdown and image messages through the HTTP API, and prints
// what each platform received and each job's state.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo")
	keep := fs.Bool("keep", false, "keep serving after the demo until interrupted, to try the API with curl")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "herald-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The engine with serve's defaults, on a database of its own, with the
	// points system on, image downloads allowed from the fakes on loopback,
	// and sends not paced (the demo sends three messages to one chat in a row).
	ef := defaultEngineFlags()
	ef.db, ef.points, ef.imageAllow, ef.platformTime, ef.pacing = filepath.Join(dir, "demo.db"), true, "127.0.0.0/8", 10*time.Second, false
	n, err := openNode(ctx, &ef, 4, slog.New(slog.NewTextHandler(io.Discard, nil)), nodeParts{http: &transport.Options{}, createDB: true})
	if err != nil {
		return err
	}
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		return err
	}
	defer n.Stop(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := transport.NewHTTPServer("", n.API, ef.syncWait)
	go srv.Serve(transport.EnvelopeListener(ln))
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/api"

	stops, closeFakes := demoStops()
	defer closeFakes()

	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	p("Herald demo — everything runs in this process:")
	p("  API       %s", base)
	p("  database  %s (SQLite, points system on)", ef.db)
	p("  platforms fakes of the Telegram, QQ, WeChat, ntfy and DingTalk APIs on loopback,")
	p("            checking requests as the real services do")
	p("")
	sys := push.System()
	acct, err := n.Engine.Accounts().Create(ctx, sys, "demo")
	if err != nil {
		return err
	}
	_, key, err := n.Engine.Keys().Create(ctx, sys, push.KeyCreate{AccountID: acct.ID})
	if err != nil {
		return err
	}
	// The whole key: the demo's database is thrown away with it.
	p("1. Seeded account %d (%d points) and API key %s (as `herald admin` would).", acct.ID, acct.Points, key)
	p("")

	step := 2
	type sent struct{ platform, jobID string }
	var jobs []sent
	for _, st := range stops {
		bot, err := n.Engine.Bots().Create(ctx, sys, push.Bot{AccountID: acct.ID, Platform: st.platform, Name: st.platform + "-demo", Config: st.config})
		if err != nil {
			return fmt.Errorf("%s bot: %w", st.platform, err)
		}
		p("%d. %s — %s bot %d", step, st.what, st.platform, bot.ID)
		step++
		var targetID string
		if st.target != "" {
			t, err := n.Engine.Targets().Bind(ctx, sys, push.Target{BotID: bot.ID, Type: push.TargetUser, Address: st.target})
			if err != nil {
				return fmt.Errorf("%s target: %w", st.platform, err)
			}
			targetID = strconv.FormatInt(t.ID, 10)
			p("   target %s = the platform's user %s", targetID, st.target)
		} else {
			p("   no target: the bot has one destination")
		}
		for i, body := range st.sends {
			body["botId"] = bot.ID
			if targetID != "" {
				body["target"] = targetID
			}
			raw, _ := json.Marshal(body)
			idem := fmt.Sprintf("demo-%s-%d", st.platform, i+1)
			status, answer, err := demoPost(ctx, base+"/openapi/v1/push/private", key, idem, raw)
			if err != nil {
				return err
			}
			var env struct {
				Data struct {
					JobID  string `json:"jobId"`
					Status string `json:"status"`
				} `json:"data"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(answer, &env)
			p("   POST /api/openapi/v1/push/private %s → HTTP %d %s", raw, status, env.Data.Status)
			if env.Message != "" {
				p("     %s", env.Message)
			}
			jobs = append(jobs, sent{st.platform, env.Data.JobID})
		}
		p("   the %s API received:", st.platform)
		for _, line := range st.received() {
			p("     %s", line)
		}
		p("")
	}

	p("%d. Job states (GET /api/openapi/queue/:id):", step)
	for _, s := range jobs {
		j, err := n.Engine.Jobs().Get(ctx, push.AccountPrincipal(acct.ID), s.jobID)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("   %-9s %s  %-9s", s.platform, j.ID, j.State)
		if j.PlatformIndex != "" {
			line += " platformIndex=" + j.PlatformIndex
		}
		p("%s", strings.TrimRight(line, " "))
	}
	a, _ := n.Engine.Accounts().Get(ctx, sys, acct.ID)
	p("")
	p("Points: %d → %d (1 point per delivered target).", acct.Points, a.Points)
	if !*keep {
		p("Run `herald demo --keep` to keep the server up and try the API yourself.")
		return nil
	}
	p("")
	p("Serving until interrupted. Try:")
	p("  curl -s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\", key)
	p("    -d '{\"botId\":1,\"target\":\"1\",\"content\":\"hi\"}' %s/openapi/v1/push/private", base)
	<-ctx.Done()
	return nil
}

// demoStops starts the fakes and describes what the demo sends through
// each. The returned function stops the fakes.
func demoStops() ([]demoStop, func()) {
	tg := fake.NewTelegram(nil)
	tg.AddChat("424242")
	tgConfig, _ := json.Marshal(map[string]string{"token": tg.NewBot(), "api_base": tg.URL()})

	qq := fake.NewQQ(nil)
	qqApp, qqSecret := qq.NewApp()
	qq.AddUser("A1B2C3D4E5F6")
	qq.UserTalked("A1B2C3D4E5F6") // wake-up messages go to users who talked to the bot

	wc := fake.NewWeChat(nil)
	wcApp, wcSecret := wc.NewApp()
	wc.AddFollower(wcApp, "oDemoFollower01")
	wc.UserWrote(wcApp, "oDemoFollower01", time.Now()) // inside the 48-hour window

	nt := fake.NewNtfy(nil)
	ntConfig, _ := json.Marshal(map[string]string{"server": nt.URL(), "topic": "herald-demo"})

	dt := fake.NewDingTalk(nil)
	dtToken, dtSecret := dt.NewRobot(fake.DingTalkSecurity{Sign: true})
	dtConfig, _ := json.Marshal(map[string]string{"access_token": dtToken, "secret": dtSecret, "api_base": dt.URL()})

	stops := []demoStop{
		{
			platform: "telegram", what: "Telegram Bot API: text, Markdown as parse_mode HTML, an image by URL",
			config: tgConfig, target: "424242",
			sends: []map[string]any{
				{"content": "Hello from Herald!"},
				{"msgType": 2, "content": "# Deploy finished\n**api** is *live* — see [the dashboard](https://example.com/d)\n\n- 3 services\n- 0 errors"},
				{"msgType": 7, "imageUrl": "https://example.com/chart.png", "content": "Today's chart"},
			},
			received: func() []string {
				var out []string
				for _, m := range tg.Messages() {
					if m.Method == "sendPhoto" {
						out = append(out, fmt.Sprintf("sendPhoto chat=%s photo=%s caption=%q", m.ChatID, m.Photo, m.Text))
						continue
					}
					mode := m.ParseMode
					if mode == "" {
						mode = "plain"
					}
					out = append(out, fmt.Sprintf("sendMessage chat=%s parse_mode=%s text=%q", m.ChatID, mode, m.Text))
				}
				return out
			},
		},
		{
			platform: "qq", what: "QQ Bot API v2: native Markdown in wake-up mode to a user",
			config: qq.BotConfig(qqApp, qqSecret), target: "A1B2C3D4E5F6",
			sends: []map[string]any{{"msgType": 2, "isWakeup": true, "content": "**Reminder**: stand-up in 5 minutes"}},
			received: func() []string {
				var out []string
				for _, m := range qq.Messages() {
					out = append(out, fmt.Sprintf("POST /v2/users/%s/messages msg_type=%d is_wakeup=%v markdown=%q", m.Target, m.MsgType, m.IsWakeup, m.Markdown))
				}
				return out
			},
		},
		{
			platform: "wechat", what: "WeChat Official Account: Markdown rendered as plain text",
			config: wc.BotConfig(wcApp, wcSecret), target: "oDemoFollower01",
			sends: []map[string]any{{"msgType": 2, "content": "## Order shipped\nTrack it [here](https://example.com/t/42)."}},
			received: func() []string {
				var out []string
				for _, m := range wc.Messages() {
					out = append(out, fmt.Sprintf("custom/send touser=%s msgtype=%s content=%q", m.ToUser, m.MsgType, m.Content))
				}
				return out
			},
		},
		{
			platform: "ntfy", what: "ntfy (a push relay): Markdown, no target",
			config: ntConfig,
			sends:  []map[string]any{{"msgType": 2, "content": "**disk full** on db1"}},
			received: func() []string {
				var out []string
				for _, m := range nt.Messages() {
					out = append(out, fmt.Sprintf("publish topic=%s markdown=%v id=%s message=%q", m.Topic, m.Markdown, m.ID, m.Message))
				}
				return out
			},
		},
		{
			platform: "dingtalk", what: "DingTalk custom robot (a workplace webhook): signed Markdown, no target",
			config: dtConfig,
			sends:  []map[string]any{{"msgType": 2, "content": "### Build #812 passed\nAll 1,204 tests green."}},
			received: func() []string {
				var out []string
				for _, m := range dt.Messages() {
					out = append(out, fmt.Sprintf("robot/send msgtype=%s signed=%v title=%q text=%q", m.MsgType, m.Signed, m.Title, m.Text))
				}
				return out
			},
		},
	}
	return stops, func() {
		tg.Close()
		qq.Close()
		wc.Close()
		nt.Close()
		dt.Close()
	}
}

func demoPost(ctx context.Context, url, key, idem string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
