package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/storage"
)

// TestSecretKeyLifecycle: the first start creates a 0600 key file beside
// the database; a wrong key, or a key file others can read, is refused;
// rotating to a new key re-seals every credential and the old key can go.
func TestSecretKeyLifecycle(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	s := startServed(t, nil, db, "--sync-wait", "2s")
	s.seed(t)
	keyFile := db + ".key"
	info, err := os.Stat(keyFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v, mode %v; want it created with 0600", keyFile, err, info.Mode().Perm())
	}
	if r := s.send(t, "sealed", ""); r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	if err := s.p.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	oldKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	status := testkit.MustAdmin(t, heraldBin, s.env, "secrets", "status")
	oldID := fmt.Sprint(status["key"])
	if status["bots"] != 1.0 || status["plain"] != 0.0 || status["unopened"] != 0.0 {
		t.Fatalf("secrets status = %v", status)
	}

	// Another key: serve refuses to start rather than run without the credentials.
	other := storage.EncodeSecretKey(storage.NewSecretKey())
	var out strings.Builder
	t.Setenv("HERALD_DB", db)
	t.Setenv("HERALD_SECRET_KEY", other)
	if code := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0"}, &out, &out); code == 0 || !strings.Contains(out.String(), "cannot be opened with the configured secret key") || !strings.Contains(out.String(), oldID) {
		t.Fatalf("serve with another key: exit %d: %s", code, out.String())
	}
	os.Unsetenv("HERALD_SECRET_KEY")
	// A key file that others can read is refused.
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0"}, &out, &out); code == 0 || !strings.Contains(out.String(), "chmod 600") {
		t.Fatalf("serve with a world-readable key file: exit %d: %s", code, out.String())
	}
	_ = os.Chmod(keyFile, 0o600)

	// Rotation: the new key as primary, the old one listed; rotate; then the
	// new key alone.
	newKey := storage.EncodeSecretKey(storage.NewSecretKey())
	rotEnv := append([]string{"HERALD_SECRET_KEY=" + newKey, "HERALD_OLD_SECRET_KEYS=" + strings.TrimSpace(string(oldKey))}, s.env...)
	rot := testkit.MustAdmin(t, heraldBin, rotEnv, "secrets", "rotate")
	if rot["resealed"] != 1.0 || rot["key"] == oldID {
		t.Fatalf("secrets rotate = %v", rot)
	}
	newEnv := append([]string{"HERALD_SECRET_KEY=" + newKey}, s.env...)
	s2 := &served{db: db, env: newEnv, tg: s.tg, key: s.key, bot: s.bot, target: s.target}
	s2.p = testkit.StartServe(t, heraldBin, newEnv, "--sync-wait", "2s")
	if r := s2.send(t, "after rotation", ""); r.Status != 200 {
		t.Fatalf("send after rotation: %d %s", r.Status, r.Body)
	}
	if n := len(s.tg.Messages()); n != 2 {
		t.Fatalf("platform received %d messages, want 2", n)
	}
}

// TestNoSecretAtRestOrInLogs runs a whole Herald with bots on several
// platforms, sends through each (a failure included), and then reads the
// database files and every line any process printed: no bot credential,
// token or API key appears in them.
func TestNoSecretAtRestOrInLogs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	env := []string{"HERALD_DB=" + db, "HERALD_LOG_LEVEL=debug", "HERALD_LOG_FORMAT=json"}
	var printed bytes.Buffer
	admin := func(args ...string) map[string]any {
		t.Helper()
		r := testkit.Admin(t, heraldBin, env, args...)
		printed.WriteString(r.Stdout + r.Stderr)
		if r.Code != 0 {
			t.Fatalf("admin %v: %s", args, r.Stderr)
		}
		return r.JSON(t)
	}
	tg := fake.NewTelegram(t)
	fs := fake.NewFeishu(t)
	wc := fake.NewWeCom(t)
	nt := fake.NewNtfy(t)
	dt := fake.NewDingTalk(t)
	sl := fake.NewSlack(t)

	acct := fmt.Sprint(admin("account", "create", "--name", "acme")["id"])
	// key create shows the plain key, once, by design: its output is the
	// one not searched.
	apiKey := testkit.MustAdmin(t, heraldBin, env, "key", "create", "--account", acct)["key"].(string)
	var secrets []string
	bot := func(platform string, cfg any) string {
		raw, _ := json.Marshal(cfg)
		return fmt.Sprint(admin("bot", "create", "--account", acct, "--platform", platform, "--name", platform, "--config", string(raw))["id"])
	}
	tgToken := tg.NewBot()
	secrets = append(secrets, tgToken, strings.Split(tgToken, ":")[1])
	tg.AddChat("4242")
	tgBot := bot("telegram", map[string]string{"token": tgToken, "api_base": tg.URL()})
	feishuApp := fs.NewApp()
	secrets = append(secrets, feishuApp.AppSecret)
	fs.AddUser("open_id", "ou_7d8a6e6df7621556ce0d21922b676706")
	fsBot := bot("feishu", json.RawMessage(feishuApp.Config(fs)))
	wecomApp := wc.NewApp()
	secrets = append(secrets, wecomApp.Secret)
	wc.AddUser(wecomApp.CorpID, "alice", "active")
	wcBot := bot("wecom", json.RawMessage(wecomApp.Config(wc)))
	ntPassword := "ntfy-" + storage.EncodeSecretKey(storage.NewSecretKey())[:20]
	nt.AddUser("herald", ntPassword, "alerts")
	secrets = append(secrets, ntPassword)
	ntBot := bot("ntfy", map[string]string{"server": nt.URL(), "topic": "alerts", "user": "herald", "password": ntPassword})
	dtToken, dtSecret := dt.NewRobot(fake.DingTalkSecurity{Sign: true})
	secrets = append(secrets, dtToken, dtSecret)
	dtBot := bot("dingtalk", map[string]string{"access_token": dtToken, "secret": dtSecret, "api_base": dt.URL()})
	hook := sl.NewHook("slack")
	secrets = append(secrets, hook[strings.LastIndex(hook, "/")+1:])
	slBot := bot("slack", map[string]string{"webhook_url": hook})
	target := func(bot, typ, addr string) string {
		return fmt.Sprint(admin("target", "bind", "--bot", bot, "--type", typ, "--address", addr)["id"])
	}
	tgTarget := target(tgBot, "user", "4242")
	fsTarget := target(fsBot, "user", "ou_7d8a6e6df7621556ce0d21922b676706")
	wcTarget := target(wcBot, "user", "alice")
	admin("bot", "list", "--account", acct)
	admin("key", "list", "--account", acct)

	p := testkit.StartServe(t, heraldBin, env, "--sync-wait", "3s", "--points")
	send := func(bot, target, idem string, status int) {
		t.Helper()
		body := map[string]any{"botId": atoi(bot), "content": "hello " + idem, "msgType": 2}
		if target != "" {
			body["target"] = target
		}
		r := p.Call(t, "POST", "/openapi/v1/push/private", apiKey, body, "Idempotency-Key", idem)
		printed.Write(r.Body)
		if r.Status != status {
			t.Fatalf("send %s: %d %s", idem, r.Status, r.Body)
		}
	}
	send(tgBot, tgTarget, "tg", 200)
	send(fsBot, fsTarget, "fs", 200)
	send(wcBot, wcTarget, "wc", 200)
	send(ntBot, "", "nt", 200)
	send(dtBot, "", "dt", 200)
	send(slBot, "", "sl", 200)
	tg.Fail(fake.TelegramFault{Status: 401, Description: "Unauthorized"})
	send(tgBot, tgTarget, "tg-fail", 500)
	// A wrong key and a bad key shape are logged as refusals, not as keys.
	wrong := "hrd_" + strings.Repeat("W", 40)
	badShape := "sk-" + strings.Repeat("Q", 40)
	for _, k := range []string{wrong, badShape} {
		r := p.Call(t, "GET", "/openapi/queue-request?key=tg", k, nil)
		printed.Write(r.Body)
		if r.Status != 401 {
			t.Fatalf("a request with the key %s…: %d %s, want 401", k[:4], r.Status, r.Body)
		}
	}
	if err := p.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	printed.WriteString(p.Output())

	secrets = append(secrets, apiKey, apiKey[4:], wrong, badShape)
	// The database file, and its WAL and shared memory if they are left.
	stored := map[string][]byte{}
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		data, err := os.ReadFile(f)
		if err != nil && (f == db || !errors.Is(err, os.ErrNotExist)) {
			t.Fatal(err)
		}
		stored[filepath.Base(f)] = data
	}
	for _, s := range secrets {
		if len(s) < 8 {
			t.Fatalf("secret %q is too short to search for", s)
		}
		if bytes.Contains(printed.Bytes(), []byte(s)) {
			t.Errorf("a secret (%s…) appears in the output of the run", s[:4])
		}
		for name, data := range stored {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("a secret (%s…) is stored in %s", s[:4], name)
			}
		}
	}
	// The run really used the credentials and produced logs to search.
	if len(tg.Messages()) != 1 || len(fs.Messages()) != 1 || len(wc.Messages()) != 1 || len(nt.Messages()) != 1 || len(dt.Messages()) != 1 || len(sl.Messages()) != 1 {
		t.Fatalf("deliveries: telegram %d, feishu %d, wecom %d, ntfy %d, dingtalk %d, slack %d", len(tg.Messages()), len(fs.Messages()), len(wc.Messages()), len(nt.Messages()), len(dt.Messages()), len(sl.Messages()))
	}
	if !strings.Contains(printed.String(), `"msg":"request"`) || !strings.Contains(printed.String(), "platform_failed") {
		t.Fatalf("the run printed no request logs to search:\n%s", printed.String())
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}
