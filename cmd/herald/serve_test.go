package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/storage"
)

// served is a herald serve process with a seeded account, key, bot and
// target on a fake Telegram.
type served struct {
	p       *testkit.Process
	db      string
	env     []string
	tg      *fake.Telegram
	key     string
	bot     string
	target  string
	keyID   string
	account string
}

func startServed(t *testing.T, tg *fake.Telegram, db string, args ...string) *served {
	t.Helper()
	env := []string{"HERALD_DB=" + db}
	s := &served{db: db, env: env, tg: tg}
	if tg == nil {
		s.tg = fake.NewTelegram(t)
	}
	s.p = testkit.StartServe(t, heraldBin, env, args...)
	return s
}

func (s *served) seed(t *testing.T) {
	t.Helper()
	a := testkit.MustAdmin(t, heraldBin, s.env, "account", "create", "--name", "acme")
	s.account = fmt.Sprint(a["id"])
	k := testkit.MustAdmin(t, heraldBin, s.env, "key", "create", "--account", s.account)
	s.key, s.keyID = k["key"].(string), fmt.Sprint(k["id"])
	cfg := `{"token":"` + s.tg.NewBot() + `","api_base":"` + s.tg.URL() + `"}`
	b := testkit.MustAdmin(t, heraldBin, s.env, "bot", "create", "--account", s.account, "--platform", "telegram", "--name", "b", "--config", cfg)
	s.bot = fmt.Sprint(b["id"])
	s.tg.AddChat("777")
	tr := testkit.MustAdmin(t, heraldBin, s.env, "target", "bind", "--bot", s.bot, "--type", "user", "--address", "777")
	s.target = fmt.Sprint(tr["id"])
}

func (s *served) send(t *testing.T, content, idem string) testkit.Response {
	t.Helper()
	var hdr []string
	if idem != "" {
		hdr = []string{"Idempotency-Key", idem}
	}
	bot, _ := strconv.Atoi(s.bot)
	return s.p.Call(t, "POST", "/openapi/v1/push/private", s.key,
		map[string]any{"botId": bot, "target": s.target, "content": content}, hdr...)
}

// unblockWhenAbandoned releases tg's blocked requests once it saw the
// connection of a killed process go: a request released before that would
// be accepted by the fake, while a real platform would not answer a
// request whose client died before it was handled.
func unblockWhenAbandoned(t *testing.T, tg *fake.Telegram) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); tg.Abandoned() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fake platform never saw the killed process's connection close")
		}
	}
	tg.Unblock()
}

func TestServeEndToEnd(t *testing.T) {
	s := startServed(t, nil, filepath.Join(t.TempDir(), "h.db"), "--points")
	s.seed(t)
	r := s.send(t, "through a real process", "e2e-1")
	if r.Status != http.StatusOK || r.JSON()["data"].(map[string]any)["status"] != "SUCCESS" {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	if msgs := s.tg.Messages(); len(msgs) != 1 || msgs[0].Text != "through a real process" {
		t.Fatalf("platform received %+v", msgs)
	}
	a := testkit.MustAdmin(t, heraldBin, s.env, "account", "show", "--id", s.account)
	if a["points"] != 99.0 {
		t.Fatalf("points %v after one send with --points, want 99", a["points"])
	}
	jobID := r.JSON()["data"].(map[string]any)["jobId"].(string)
	j := testkit.MustAdmin(t, heraldBin, s.env, "job", "show", "--id", jobID)
	if j["status"] != "succeeded" || j["jobId"] != jobID {
		t.Fatalf("admin job show = %v", j)
	}
	// A key revoked with herald admin while serve runs stops working
	// within --auth-recheck (100 ms by default).
	testkit.MustAdmin(t, heraldBin, s.env, "key", "revoke", "--id", s.keyID)
	s.refusedWithin(t, time.Second, "key_revoked")
	// A suspended account is refused too.
	k := testkit.MustAdmin(t, heraldBin, s.env, "key", "create", "--account", s.account)
	s.key = k["key"].(string)
	testkit.MustAdmin(t, heraldBin, s.env, "account", "suspend", "--id", s.account)
	s.refusedWithin(t, time.Second, "account_suspended")
}

// refusedWithin sends until the server refuses the send with 403 and
// reason, failing when that takes longer than limit. A send it accepts
// meanwhile is a message delivered with the key before the change was
// seen.
func (s *served) refusedWithin(t *testing.T, limit time.Duration, reason string) {
	t.Helper()
	changed := time.Now()
	for {
		r := s.send(t, "after "+reason, "")
		if r.Status == http.StatusForbidden && r.JSON()["error"] == reason {
			return
		}
		if r.Status != http.StatusOK {
			t.Fatalf("send after the change (want %s): %d %s", reason, r.Status, r.Body)
		}
		if time.Since(changed) > limit {
			t.Fatalf("sends still work %s after the change, want 403 %s", time.Since(changed).Round(time.Millisecond), reason)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeAuthRecheckZero: with --auth-recheck 0, a key revoked by
// herald admin is refused on the very next request.
func TestServeAuthRecheckZero(t *testing.T) {
	s := startServed(t, nil, filepath.Join(t.TempDir(), "h.db"), "--auth-recheck", "0")
	s.seed(t)
	if r := s.send(t, "before", ""); r.Status != http.StatusOK {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	testkit.MustAdmin(t, heraldBin, s.env, "key", "revoke", "--id", s.keyID)
	if r := s.send(t, "after revoke", ""); r.Status != http.StatusForbidden || r.JSON()["error"] != "key_revoked" {
		t.Fatalf("send with a revoked key: %d %s", r.Status, r.Body)
	}
}

func TestServeDrainsOnSIGTERM(t *testing.T) {
	s := startServed(t, nil, filepath.Join(t.TempDir(), "h.db"), "--sync-wait", "200ms", "--drain-timeout", "5s")
	s.seed(t)
	s.tg.SetDelay(1500 * time.Millisecond)
	r := s.send(t, "in flight", "")
	if r.Status != http.StatusAccepted {
		t.Fatalf("slow send: %d %s", r.Status, r.Body)
	}
	jobID := r.JSON()["data"].(map[string]any)["jobId"].(string)
	<-s.tg.Arrived() // the send is at the platform

	done := make(chan error, 1)
	go func() { done <- s.p.Terminate(15 * time.Second) }()
	for deadline := time.Now().Add(3 * time.Second); !strings.Contains(s.p.Output(), "msg=draining"); {
		if time.Now().After(deadline) {
			t.Fatal("serve did not start draining on SIGTERM")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// While draining, new sends are refused with 503 and Retry-After, and
	// queries still work.
	drained := s.send(t, "during drain", "")
	if q := s.p.Call(t, "GET", "/openapi/queue/"+jobID, s.key, nil); q.Status != http.StatusOK {
		t.Fatalf("query while draining: %d %s", q.Status, q.Body)
	}
	if drained.Status != http.StatusServiceUnavailable || drained.Header.Get("Retry-After") == "" || drained.JSON()["error"] != "draining" {
		t.Fatalf("send while draining: %d %v %s", drained.Status, drained.Header, drained.Body)
	}
	// The readiness probe says so; the liveness probe does not.
	if r := s.p.CallRoot(t, "GET", "/readyz"); r.Status != http.StatusServiceUnavailable || r.JSON()["status"] != "draining" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("readyz while draining: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r := s.p.CallRoot(t, "GET", "/healthz"); r.Status != http.StatusOK {
		t.Fatalf("healthz while draining: %d %s", r.Status, r.Body)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve did not exit cleanly: %v", err)
	}
	// The running send finished within the drain timeout.
	j := testkit.MustAdmin(t, heraldBin, s.env, "job", "show", "--id", jobID)
	if j["status"] != "succeeded" {
		t.Fatalf("job after drain = %v, want succeeded", j)
	}
	if n := len(s.tg.Messages()); n != 1 {
		t.Fatalf("platform received %d messages, want 1", n)
	}
}

func TestServeRestartAfterSIGKILL(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	s := startServed(t, nil, db, "--sync-wait", "100ms", "--workers", "1", "--points")
	s.seed(t)
	s.tg.Block()
	var ids []string
	for i := 0; i < 3; i++ {
		r := s.send(t, fmt.Sprintf("m%d", i), fmt.Sprintf("k%d", i))
		if r.Status != http.StatusAccepted {
			t.Fatalf("send %d: %d %s", i, r.Status, r.Body)
		}
		ids = append(ids, r.JSON()["data"].(map[string]any)["jobId"].(string))
	}
	<-s.tg.Arrived() // the one worker is sending m0; m1 and m2 are queued
	s.p.Kill()
	unblockWhenAbandoned(t, s.tg)

	s2 := startServed(t, s.tg, db, "--sync-wait", "100ms", "--points")
	s2.key, s2.bot, s2.target = s.key, s.bot, s.target
	want := map[string]string{ids[0]: "uncertain", ids[1]: "succeeded", ids[2]: "succeeded"}
	deadline := time.Now().Add(10 * time.Second)
	for id, state := range want {
		for {
			r := s2.p.Call(t, "GET", "/openapi/queue/"+id, s2.key, nil)
			got := r.JSON()["data"].(map[string]any)["status"]
			if got == state {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s is %v, want %s", id, got, state)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var texts []string
	for _, m := range s.tg.Messages() {
		texts = append(texts, m.Text)
	}
	slices.Sort(texts)
	// m0's request reached the platform and was cut off by the kill: it is
	// uncertain and never sent again; m1 and m2 were sent once each.
	if strings.Join(texts, ",") != "m1,m2" {
		t.Fatalf("platform recorded %v, want m1,m2 once each", texts)
	}
	if n := s.tg.Requests(); n != 3 {
		t.Fatalf("platform saw %d requests, want 3", n)
	}
	// Replays after the restart return the original jobs.
	r := s2.send(t, "m1", "k1")
	if r.Header.Get("Idempotency-Replay") != "true" || r.JSON()["data"].(map[string]any)["jobId"] != ids[1] {
		t.Fatalf("replay after restart: %v %s", r.Header, r.Body)
	}
	a := testkit.MustAdmin(t, heraldBin, s2.env, "account", "show", "--id", s.account)
	if a["points"] != 97.0 {
		t.Fatalf("points %v, want 97 (three charges, no refunds)", a["points"])
	}
}

func TestServeRefusesBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--sync-wait", "0s"}, "--sync-wait must be positive"},
		{[]string{"serve", "--auth-recheck", "2s"}, "--auth-recheck must be between 0 and 1s"},
		{[]string{"serve", "--auth-recheck", "-1ms"}, "--auth-recheck must be between 0 and 1s"},
		{[]string{"serve", "--workers", "0"}, "--workers 0 (API only) needs --redis"},
		{[]string{"serve", "--redis", "redis://127.0.0.1:1/0"}, "--redis needs a PostgreSQL --db"},
		{[]string{"serve", "--db", "postgres://127.0.0.1:1/x", "--redis", "http://x"}, "is not a Redis URL"},
		{[]string{"serve", "--db", "postgres://u:secret@127.0.0.1:1/x?sslmode=disable"}, "cannot connect to PostgreSQL at postgres://u:xxxxx@127.0.0.1:1/x"},
		{[]string{"worker"}, "herald worker needs --redis"},
		{[]string{"worker", "--db", "h.db", "--redis", "redis://127.0.0.1:1/0"}, "--redis needs a PostgreSQL --db"},
		{[]string{"serve", "--log-format", "xml"}, "--log-format"},
		{[]string{"serve", "--image-fetch-allow", "nonsense"}, "not a CIDR"},
		{[]string{"bogus"}, "unknown command"},
	}
	// A PostgreSQL database needs the key that seals bot credentials.
	var keyOut strings.Builder
	if code := run(t.Context(), []string{"serve", "--db", "postgres://u:pw@127.0.0.1:1/x"}, &keyOut, &keyOut); code == 0 || !strings.Contains(keyOut.String(), "set HERALD_SECRET_KEY") {
		t.Errorf("PostgreSQL without a secret key: exit %d, %q", code, keyOut.String())
	}
	t.Setenv("HERALD_SECRET_KEY", storage.EncodeSecretKey(storage.NewSecretKey()))
	for _, tt := range tests {
		var out strings.Builder
		code := run(t.Context(), tt.args, &out, &out)
		if code == 0 || !strings.Contains(out.String(), tt.want) || strings.Contains(out.String(), "secret@") {
			t.Errorf("herald %v: exit %d, output %q; want failure with %q and no password", tt.args, code, out.String(), tt.want)
		}
	}
	var out strings.Builder
	t.Setenv("HERALD_REDIS", "redis://127.0.0.1:1/0")
	if code := run(t.Context(), []string{"serve"}, &out, &out); code == 0 || !strings.Contains(out.String(), "--redis needs a PostgreSQL --db") {
		t.Errorf("HERALD_REDIS with a SQLite database: exit %d, %q", code, out.String())
	}
	t.Setenv("HERALD_REDIS", "")
	out.Reset()
	t.Setenv("HERALD_SYNC_WAIT", "soon")
	if code := run(t.Context(), []string{"serve"}, &out, &out); code == 0 || !strings.Contains(out.String(), "HERALD_SYNC_WAIT") {
		t.Errorf("a bad HERALD_SYNC_WAIT: exit %d, %q", code, out.String())
	}
}

func TestDemo(t *testing.T) {
	var out strings.Builder
	if code := run(t.Context(), []string{"demo"}, &out, &out); code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out.String())
	}
	got := out.String()
	for _, want := range []string{
		`sendMessage chat=424242 parse_mode=plain text="Hello from Herald!"`,
		`parse_mode=HTML text="<b>Deploy finished</b>`,
		"sendPhoto chat=424242 photo=https://example.com/chart.png",
		`POST /v2/users/A1B2C3D4E5F6/messages msg_type=2 is_wakeup=true markdown="**Reminder**`,
		`custom/send touser=oDemoFollower01 msgtype=text content="Order shipped`,
		`publish topic=herald-demo markdown=true`,
		`robot/send msgtype=markdown signed=true title="Build #812 passed"`,
		"Points: 100 → 93",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q:\n%s", want, got)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^   \S+ +\S+  succeeded( platformIndex=\S+)?$`).FindAllString(got, -1)); n != 7 {
		t.Errorf("demo output shows %d succeeded jobs, want 7:\n%s", n, got)
	}
	if regexp.MustCompile(`platformIndex=(\s|$)`).MatchString(got) {
		t.Errorf("demo output shows an empty platformIndex=:\n%s", got)
	}
	// The key is a throwaway: printed whole, and the curl line needs it.
	m := regexp.MustCompile(`API key (\S+) \(as`).FindStringSubmatch(got)
	if m == nil || strings.Contains(m[1], "…") || !strings.HasPrefix(m[1], "hrd_") || len(m[1]) < 40 {
		t.Errorf("demo output does not show the whole API key:\n%s", got)
	}
}
