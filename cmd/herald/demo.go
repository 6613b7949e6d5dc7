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
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// demo runs a whole Herald in this process against a fake Telegram Bot API
// on loopback, seeds an account, key, bot and target, sends a text, a
// Markdown and an image message through the HTTP API, and prints what the
// platform received and each job's state.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	keep := fs.Bool("keep", false, "keep serving after the demo until interrupted, to try the API with curl")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "herald-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	tg := testkit.NewTelegram(nil)
	defer tg.Close()

	ef := engineFlags{
		db: filepath.Join(dir, "demo.db"), points: true, initialPoints: 100, rateLimit: 120,
		syncWait: 8 * time.Second, queueWait: time.Hour, backlogBot: 100, backlogTotal: 1000,
		keyPrefix: push.DefaultKeyPrefix, logFormat: "text", logLevel: "error",
		imageAllow: "127.0.0.0/8", platformTime: 10 * time.Second,
	}
	n, err := openNode(ctx, &ef, 4, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer n.close()
	if err := n.eng.Start(ctx); err != nil {
		return err
	}
	defer n.eng.Stop(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: transport.New(n.eng, transport.Options{}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/api"

	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	p("Herald demo — everything runs in this process:")
	p("  API            %s", base)
	p("  fake Telegram  %s (checks requests like the real Bot API)", tg.URL())
	p("  database       %s (SQLite, points system on)", ef.db)
	p("")

	acct, err := n.eng.CreateAccount(ctx, "demo")
	if err != nil {
		return err
	}
	_, key, err := n.eng.CreateAPIKey(ctx, acct.ID, 0)
	if err != nil {
		return err
	}
	cfg, _ := json.Marshal(map[string]string{"token": tg.NewBot(), "api_base": tg.URL()})
	bot, err := n.eng.CreateBot(ctx, push.Bot{AccountID: acct.ID, Platform: "telegram", Name: "demo-bot", Config: cfg})
	if err != nil {
		return err
	}
	tg.AddChat("424242")
	target, err := n.eng.BindTarget(ctx, push.Target{BotID: bot.ID, Type: push.TargetUser, Address: "424242", Name: "Ada"})
	if err != nil {
		return err
	}
	p("1. Seeded (as `herald admin` would): account %d with %d points, API key %s…, telegram bot %d, user target %d (chat 424242)",
		acct.ID, acct.Points, key[:8], bot.ID, target.ID)
	p("")

	sends := []struct {
		what string
		body map[string]any
	}{
		{"text", map[string]any{"botId": bot.ID, "target": strconv.FormatInt(target.ID, 10), "content": "Hello from Herald!"}},
		{"Markdown", map[string]any{"botId": bot.ID, "target": strconv.FormatInt(target.ID, 10), "msgType": 2,
			"content": "# Deploy finished\n**api** is *live* — see [the dashboard](https://example.com/d)\n\n- 3 services\n- 0 errors"}},
		{"image", map[string]any{"botId": bot.ID, "target": strconv.FormatInt(target.ID, 10), "msgType": 7,
			"imageUrl": "https://example.com/chart.png", "content": "Today's chart"}},
	}
	var jobIDs []string
	for i, s := range sends {
		body, _ := json.Marshal(s.body)
		idem := fmt.Sprintf("demo-%d", i+1)
		p("%d. POST %s/openapi/v1/push/private  (%s, Idempotency-Key: %s)", i+2, base, s.what, idem)
		p("   %s", body)
		status, answer, err := demoPost(ctx, base+"/openapi/v1/push/private", key, idem, body)
		if err != nil {
			return err
		}
		p("   → HTTP %d %s", status, bytes.TrimSpace(answer))
		var env struct {
			Data struct {
				JobID string `json:"jobId"`
			} `json:"data"`
		}
		_ = json.Unmarshal(answer, &env)
		jobIDs = append(jobIDs, env.Data.JobID)
		p("")
	}

	p("%d. What the fake Telegram received:", len(sends)+2)
	for _, m := range tg.Messages() {
		mode := m.ParseMode
		if mode == "" {
			mode = "plain"
		}
		if m.Method == "sendPhoto" {
			p("   sendPhoto chat=%s photo=%s caption=%q", m.ChatID, m.Photo, m.Text)
		} else {
			p("   sendMessage chat=%s parse_mode=%s text=%q", m.ChatID, mode, m.Text)
		}
	}
	p("")
	p("%d. Job states (GET /api/openapi/queue/:id):", len(sends)+3)
	for _, id := range jobIDs {
		j, err := n.eng.Job(ctx, acct.ID, id)
		if err != nil {
			return err
		}
		p("   %s  %-9s platformIndex=%s", j.ID, j.State, j.PlatformIndex)
	}
	a, _ := n.eng.Account(ctx, acct.ID)
	p("")
	p("Points: %d → %d (1 point per delivered target).", acct.Points, a.Points)
	if !*keep {
		p("Run `herald demo --keep` to keep the server up and try the API yourself.")
		return nil
	}
	p("")
	p("Serving until interrupted. Try:")
	p("  curl -s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\", key)
	p("    -d '{\"botId\":%d,\"target\":\"%d\",\"content\":\"hi\"}' %s/openapi/v1/push/private", bot.ID, target.ID, base)
	<-ctx.Done()
	return nil
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
