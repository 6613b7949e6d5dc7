package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestServeJSONLogs runs herald serve with --log-format json --log-level
// debug through sends with keys, a bot with credentials in its config, a
// platform that refuses, rate-limits and drops requests, and refusals; it
// reads every log line, finds the fields of each request line, and finds
// no API key, key hash, bot token or token secret anywhere in the output.
func TestServeJSONLogs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	env := []string{"HERALD_DB=" + db}
	tg := fake.NewTelegram(t)
	p := testkit.StartServe(t, heraldBin, env, "--log-format", "json", "--log-level", "debug", "--points")

	acct := testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", "acme")
	account := fmt.Sprint(acct["id"])
	key := testkit.MustAdmin(t, heraldBin, env, "key", "create", "--account", account)["key"].(string)
	token := tg.NewBot()
	bot := testkit.MustAdmin(t, heraldBin, env, "bot", "create", "--account", account, "--platform", "telegram", "--name", "b",
		"--config", `{"token":"`+token+`","api_base":"`+tg.URL()+`"}`)
	tg.AddChat("777")
	target := testkit.MustAdmin(t, heraldBin, env, "target", "bind", "--bot", fmt.Sprint(bot["id"]), "--type", "user", "--address", "777")
	botID, _ := strconv.Atoi(fmt.Sprint(bot["id"]))
	body := func(content string) map[string]any {
		return map[string]any{"botId": botID, "target": fmt.Sprint(target["id"]), "content": content}
	}
	wrongKey := "hrd_" + strings.Repeat("Q", 40)

	type call struct {
		name, method, path, key string
		body                    any
		header                  []string
		before                  func()
		status                  int
	}
	calls := []call{
		{"send", "POST", "/openapi/v1/push/private", key, body("one"), []string{"Idempotency-Key", "log-1", "X-Request-Id", "trace-log-1"}, nil, 200},
		{"replay", "POST", "/openapi/v1/push/private", key, body("one"), []string{"Idempotency-Key", "log-1"}, nil, 200},
		{"token refused", "POST", "/openapi/v1/push/private", key, body("two"), nil,
			func() { tg.Fail(fake.TelegramFault{Status: 401, Description: "Unauthorized"}) }, 500},
		{"rate-limited by the platform, then sent", "POST", "/openapi/v1/push/private", key, body("three"), nil,
			func() {
				tg.Fail(fake.TelegramFault{Status: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1})
			}, 200},
		{"dropped", "POST", "/openapi/v1/push/private", key, body("four"), nil, func() { tg.DropNext(1) }, 202},
		{"missing botId", "POST", "/openapi/v1/push/private", key, map[string]any{"content": "x"}, nil, nil, 400},
		{"wrong key", "POST", "/openapi/v1/push/private", wrongKey, body("five"), nil, nil, 401},
		{"older header", "GET", "/openapi/queue-request?key=log-1", "", nil, []string{"X-Service-OpenAPI-Key", key}, nil, 200},
	}
	answers := make(map[string]testkit.Response)
	for _, c := range calls {
		if c.before != nil {
			c.before()
		}
		r := p.Call(t, c.method, c.path, c.key, c.body, c.header...)
		if r.Status != c.status {
			t.Fatalf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.status)
		}
		answers[c.name] = r
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := p.CallRoot(t, "GET", path); r.Status != 200 {
			t.Fatalf("%s: %d", path, r.Status)
		}
	}
	if err := p.Terminate(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	out := p.Output()

	// Every line is one JSON object with a time, a level and a message
	// (but the line that tells where serve listens, on stdout).
	byID := make(map[string]map[string]any)
	var messages []string
	for _, line := range testkit.Lines(out) {
		if strings.HasPrefix(line, "herald listening on ") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("log line without %s: %q", k, line)
			}
		}
		messages = append(messages, m["msg"].(string))
		if m["msg"] == "request" {
			for _, k := range []string{"method", "route", "status", "duration", "request_id"} {
				if _, ok := m[k]; !ok {
					t.Errorf("request line without %s: %q", k, line)
				}
			}
			byID[m["request_id"].(string)] = m
		}
	}
	accountID, _ := strconv.ParseFloat(account, 64)
	jobOf := func(name string) string {
		return answers[name].JSON()["data"].(map[string]any)["jobId"].(string)
	}
	tests := []struct {
		call   string
		level  string
		want   map[string]any
		absent []string
	}{
		{"send", "INFO", map[string]any{"request_id": "trace-log-1", "method": "POST", "route": "/api/openapi/v1/push/private", "status": 200.0, "account": accountID, "jobs": jobOf("send")}, []string{"reason", "replay"}},
		{"replay", "INFO", map[string]any{"status": 200.0, "account": accountID, "jobs": jobOf("send"), "replay": true}, []string{"reason"}},
		{"token refused", "ERROR", map[string]any{"status": 500.0, "account": accountID, "jobs": jobOf("token refused"), "reason": "platform_failed"}, nil},
		{"rate-limited by the platform, then sent", "INFO", map[string]any{"status": 200.0, "jobs": jobOf("rate-limited by the platform, then sent")}, []string{"reason"}},
		{"dropped", "INFO", map[string]any{"status": 202.0, "jobs": jobOf("dropped")}, []string{"reason"}},
		{"missing botId", "WARN", map[string]any{"status": 400.0, "account": accountID, "reason": "missing_field"}, []string{"jobs"}},
		{"wrong key", "WARN", map[string]any{"status": 401.0, "reason": "invalid_api_key", "route": "/api/openapi/v1/push/private"}, []string{"account", "jobs"}},
		{"older header", "INFO", map[string]any{"status": 200.0, "method": "GET", "route": "/api/openapi/queue-request", "account": accountID, "jobs": jobOf("send")}, nil},
	}
	for _, tt := range tests {
		rid := answers[tt.call].Header.Get("X-Request-Id")
		line, ok := byID[rid]
		if rid == "" || !ok {
			t.Errorf("%s: no request line with the answer's X-Request-Id %q", tt.call, rid)
			continue
		}
		if line["level"] != tt.level {
			t.Errorf("%s: level %v, want %s", tt.call, line["level"], tt.level)
		}
		for k, v := range tt.want {
			if line[k] != v {
				t.Errorf("%s: %s = %v, want %v (line %v)", tt.call, k, line[k], v, line)
			}
		}
		for _, k := range tt.absent {
			if _, ok := line[k]; ok {
				t.Errorf("%s: the line has %s: %v", tt.call, k, line)
			}
		}
	}
	// Probes and metrics log at debug level.
	probes := 0
	for _, line := range byID {
		switch line["route"] {
		case "/healthz", "/readyz", "/metrics", "/api/openapi.json":
			probes++
			if line["level"] != "DEBUG" {
				t.Errorf("%s logged at %v", line["route"], line["level"])
			}
		}
	}
	if probes < 4 {
		t.Errorf("%d probe lines, want the document fetch and three probes", probes)
	}
	for _, want := range []string{"herald serving", "retrying platform send", "job settled", "draining", "stopped"} {
		if !strings.Contains(strings.Join(messages, "\n"), want) {
			t.Errorf("no %q line in the log", want)
		}
	}
	// No secret anywhere.
	_, tokenSecret, _ := strings.Cut(token, ":")
	for name, secret := range map[string]string{
		"API key": key, "API key hash": push.HashKey(key), "API key body": strings.TrimPrefix(key, "hrd_"),
		"wrong API key": wrongKey, "bot token": token, "bot token secret": tokenSecret,
	} {
		if strings.Contains(out, secret) {
			t.Errorf("the log output contains the %s", name)
		}
	}
	if t.Failed() {
		t.Logf("log output:\n%s", out)
	}
}
