package console_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport/console"
)

// The console in Debian's Chromium: a whole Herald with fake platforms,
// driven as a person would, page by page. Each page is checked with
// axe-core (no serious or critical violation), photographed into the
// artifacts folder, and no page asks any host but the server for anything.

// need returns a test prerequisite found by find, or skips the test
// locally and fails it in CI (CI set), where scripts/test installs it.
func need(t *testing.T, what, install string, find func() string) string {
	t.Helper()
	if p := find(); p != "" {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing: %s (scripts/test does it)", what, install)
	}
	t.Skipf("%s is missing: %s; CI fails here instead of skipping", what, install)
	return ""
}

// axeSource reads axe-core, which scripts/test installs from the npm
// registry and names in HERALD_TEST_AXE.
func axeSource(t *testing.T) string {
	path := need(t, "axe-core (HERALD_TEST_AXE)", `npm install --prefix "$dir" axe-core@4 and export HERALD_TEST_AXE=$dir/node_modules/axe-core/axe.min.js`, func() string {
		p := os.Getenv("HERALD_TEST_AXE")
		if _, err := os.Stat(p); p == "" || err != nil {
			return ""
		}
		return p
	})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// artifacts is where the screenshots go: HERALD_TEST_ARTIFACTS, else
// testdata/out beside the test (ignored by git).
func artifacts(t *testing.T) string {
	dir := os.Getenv("HERALD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "out")
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tab is a browser tab on the console, with the checks every page gets.
type tab struct {
	t     *testing.T
	ctx   context.Context
	root  string
	axe   string
	shots string

	mu       sync.Mutex
	requests []string
	problems []string // the browser's errors: CSP refusals, script exceptions
}

func newTab(t *testing.T, root string) *tab {
	t.Helper()
	b := &tab{t: t, root: root, axe: axeSource(t), shots: artifacts(t)}
	ctx := testkit.Chromium(t, 100*time.Second)
	b.ctx = ctx
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
				b.problems = append(b.problems, string(e.Entry.Source)+": "+e.Entry.Text+" at "+e.Entry.URL)
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text+" "+e.ExceptionDetails.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v (at %s)", what, err, b.location())
	}
}

func (b *tab) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// open loads a page of the console.
func (b *tab) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.root+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// fill types into a field.
func (b *tab) fill(sel, value string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).value = ""`)); err != nil {
		b.t.Fatalf("clear %s: %v", sel, err)
	}
	b.do("fill "+sel, chromedp.SendKeys(chromedp.CSS(sel), value))
}

// choose picks a select's option.
func (b *tab) choose(sel, value string) {
	b.t.Helper()
	b.do("choose "+sel, chromedp.SetValue(chromedp.CSS(sel), value))
}

// submit clicks a button and waits for the page it leads to (its path
// starts with path).
func (b *tab) submit(button, path string) {
	b.t.Helper()
	before := b.eval(`performance.timeOrigin`)
	b.do("click "+button, chromedp.Click(chromedp.CSS(button)))
	deadline := time.Now().Add(15 * time.Second)
	for {
		loc := b.location()
		if strings.HasPrefix(loc, b.root+path) && b.eval(`performance.timeOrigin`) != before && b.eval(`document.readyState === "complete" ? 1 : 0`) == 1 {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("after %s: at %s, want %s…", button, loc, path)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func (b *tab) eval(js string) float64 {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {textContent: ""}).textContent.trim()`))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *tab) count(sel string) int {
	b.t.Helper()
	return int(b.eval(`document.querySelectorAll(` + strconv.Quote(sel) + `).length`))
}

// waitFor waits until the page has sel (the page's script changes it,
// or reloads the page).
func (b *tab) waitFor(sel string, within time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, within)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("%s did not appear within %s: %v (at %s)", sel, within, err, b.location())
	}
}

// check runs axe-core on the page and fails on a serious or critical
// violation, then saves a screenshot under name.
func (b *tab) check(name string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](b.axe+";true")); err != nil {
		b.t.Fatalf("inject axe-core: %v", err)
	}
	bad, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe-core on %s: %v", name, err)
	}
	for _, v := range bad {
		b.t.Errorf("page %s (%s): %s", name, b.location(), v)
	}
	b.shot(name)
}

// shot saves a screenshot of the page under name.
func (b *tab) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// outside returns the requests made to any host but the server. data:
// URLs (the browser's own icons of date fields) reach no host.
func (b *tab) outside() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, u := range b.requests {
		if !strings.HasPrefix(u, b.root+"/") && u != "about:blank" && !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	for _, p := range b.problems {
		b.t.Errorf("the browser reported: %s", p)
	}
	if !slices.ContainsFunc(b.requests, func(u string) bool { return strings.HasPrefix(u, b.root+"/static/console.js") }) {
		b.t.Errorf("the console's own script was never requested (%d requests seen): the network listener does not work", len(b.requests))
	}
	return out
}

// sent is an answer of the send API.
type sent struct {
	Code int `json:"code"`
	Data struct {
		JobID     string `json:"jobId"`
		Uncertain bool   `json:"uncertain"`
	} `json:"data"`
}

// TestConsoleInChromium walks a member's life through the console, in
// Chinese and in English (memberLife); then the key pages in Chinese
// through the switch, a phone-sized screen, and an operator who suspends
// the account, which ends the member's session, and activates it again.
func TestConsoleInChromium(t *testing.T) {
	slow := fake.NewTelegram(t) // a second Telegram server, for the jobs that must hang or be lost
	h := newConsole(t, testkit.WithWorkers(1), testkit.WithLimits(push.Limits{SyncWait: 300 * time.Millisecond}),
		testkit.WithEngineOptions(func(o *push.Options) { o.Sessions.SignUp = push.SignUpOpen }))
	ctx := context.Background()
	memberLife(t, h, slow, "zh")
	l := memberLife(t, h, slow, "en")
	b, acct, bot, lost := l.tab, l.account, l.bot, l.lost

	// The key pages in Chinese, chosen with the switch and remembered.
	b.submit(`.langs a[lang="zh-CN"]`, "/jobs")
	b.open("/keys")
	if got := b.text("h1"); got != "API 密钥" || b.eval(`document.documentElement.lang === "zh-CN" ? 1 : 0`) != 1 {
		t.Fatalf("the keys page in Chinese: %q", got)
	}
	b.check("keys-zh")
	b.fill("#key-name", "部署脚本")
	b.submit(`form[action="/keys"] button[type=submit]`, "/keys")
	if got := b.text(".note.warn h2"); got != "你的新 API 密钥" || !strings.Contains(b.text(".note.warn"), "只显示这一次") {
		t.Fatalf("the new key's warning in Chinese: %q", b.text(".note.warn"))
	}
	b.check("key-new-zh")
	b.open("/jobs/" + lost)
	if got := b.text("#job-state"); got != "成功" {
		t.Fatalf("the job's state in Chinese: %q", got)
	}
	b.check("job-zh")
	b.open("/")
	b.check("dashboard-zh")

	// A phone-sized screen: no page is wider than the screen.
	b.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, p := range []string{"/", "/jobs/" + lost, "/keys", "/targets", "/bots/" + strconv.FormatInt(bot.ID, 10)} {
		b.open(p)
		if b.eval(`document.documentElement.scrollWidth - window.innerWidth`) > 0 {
			t.Errorf("%s is wider than a phone's screen", p)
		}
	}
	b.check("dashboard-phone")

	// An operator suspends the account: the member's session ends.
	st := push.AccountSuspended
	if _, err := h.Engine.Accounts().Update(ctx, push.System(), acct, push.AccountUpdate{Status: &st}); err != nil {
		t.Fatal(err)
	}
	b.open("/keys")
	if !strings.HasPrefix(b.location(), h.Root+"/signin?ended=1") {
		t.Fatalf("after the suspension: at %s, want the sign-in page", b.location())
	}

	// An operator's pages: the account activated again, the audit trail,
	// the service's health.
	b.do("wide", chromedp.EmulateViewport(1280, 900))
	ops := h.Account(t, "ops")
	h.User(t, ops.ID, "op@example.com", push.RoleOperator)
	b.fill("#email", "op@example.com")
	b.fill("#password", testkit.Password)
	b.submit(`form[action="/signin"] button[type=submit]`, "/keys")
	b.open("/ops/accounts")
	b.check("ops-accounts")
	b.submit(`#account-`+strconv.FormatInt(acct, 10)+` form[action$="/status"] button`, "/ops/accounts")
	if a, err := h.Engine.Accounts().Get(ctx, push.System(), acct); err != nil || a.Status != push.AccountActive {
		t.Fatalf("after activating: %+v %v", a, err)
	}
	b.open("/ops/audit")
	b.check("ops-audit")
	b.open("/ops/health")
	b.check("ops-health")

	if out := b.outside(); len(out) > 0 {
		t.Errorf("the console requested %v, outside the server", out)
	}
}

// life is what memberLife leaves: the member's tab, account, the
// uncertain job it resolved and its bot.
type life struct {
	tab     *tab
	account int64
	lost    string
	bot     push.Bot
}

// memberLife walks a member's life through the console in a language:
// sign up (after choosing the language, when it is not English), sign in
// (the initial points once), a Telegram bot from the form, verified, a
// chat bound by invite as its user would, a test message, an invite, a key
// shown once, a send through the API seen succeeding, an uncertain job
// resolved after the warning, a queued job canceled with its refund in
// the ledger. The texts it reads are the language's catalog entries, and
// axe-core checks every page.
func memberLife(t *testing.T, h *testkit.Herald, slow *fake.Telegram, lang string) life {
	t.Helper()
	b := newTab(t, h.Root)
	ctx := context.Background()
	chat, keyName := map[string]int64{"en": 424242, "zh": 434343}[lang], map[string]string{"en": "deploy script", "zh": "部署脚本"}[lang]
	w := console.Words(lang)
	suffix := map[string]string{"en": "", "zh": "-zh"}[lang]
	email, password := lang+"-ada@example.com", "a long and secret passphrase"
	if lang != "en" {
		// The language switch, before signing up: remembered on every page.
		b.open("/lang/" + lang + "?next=/signup")
	}

	// Sign up, sign out, sign in.
	b.open("/signup")
	b.check("signup" + suffix)
	b.fill("#email", email)
	b.fill("#password", password)
	b.fill("#password2", password)
	b.fill("#account", "Ada's alerts")
	b.submit(`form[action="/signup"] button[type=submit]`, "/?done=welcome")
	b.check("dashboard-new" + suffix)
	if got := b.text(".card .big"); got != "100" {
		t.Fatalf("balance on the dashboard %q, want 100 (the initial points)", got)
	}
	for range 2 {
		b.submit(`form[action="/signout"] button`, "/signin")
		b.fill("#email", email)
		b.fill("#password", password)
		b.submit(`form[action="/signin"] button[type=submit]`, "/")
	}
	b.open("/points")
	b.check("points-initial" + suffix)
	if n, got := b.count("tr.ledger-initial"), b.text("#balance"); n != 1 || got != "100" {
		t.Fatalf("after three sign-ins: %d initial rows, balance %q; want 1 and 100", n, got)
	}
	acct := int64(0)
	u, err := h.Engine.Users().List(ctx, push.System(), push.UserFilter{Limit: push.MaxPageSize})
	for _, it := range u.Items {
		if it.Email == email {
			acct = it.AccountID
		}
	}
	if err != nil || acct == 0 {
		t.Fatalf("users: %v %v", u, err)
	}

	// A Telegram bot from the form made of the platform's fields.
	b.open("/bots")
	b.check("bots-empty" + suffix)
	b.choose("#platform", "telegram")
	b.submit(`form[action="/bots/new"] button`, "/bots/new?platform=telegram")
	b.check("bot-new" + suffix)
	token := h.Telegram.NewBot()
	b.fill("#name", "alerts")
	b.fill("#cfg-token", token)
	b.choose("#cfg-receive", "poll")
	b.fill("#cfg-api_base", h.Telegram.URL())
	b.submit(`form[action="/bots"] button[type=submit]`, "/bots/")
	bots, err := h.Engine.Bots().List(ctx, push.System(), push.BotFilter{AccountID: acct})
	if err != nil || len(bots.Items) != 1 || bots.Items[0].Name != "alerts" {
		t.Fatalf("bots after the form: %+v %v", bots.Items, err)
	}
	bot := bots.Items[0]
	b.submit(`form[action$="/verify"] button`, "/bots/")
	if got := b.text(".note.ok"); got != w["done.bot_verified"] {
		t.Fatalf("after verifying: %q", got)
	}
	b.check("bot" + suffix)

	// Bind a chat by invite: the code, the link and the QR code; the
	// user sends /start <code> from the link, and the page turns bound.
	b.submit(`form[action$="/bind"] button`, "/bots/")
	code := b.text("#bind-code")
	if len(code) != 8 || !strings.HasSuffix(b.text("#bind-link"), "?start="+code) || b.count("svg.qr path") != 1 {
		t.Fatalf("bind page: code %q, link %q, %d QR codes", code, b.text("#bind-link"), b.count("svg.qr path"))
	}
	b.check("bind-waiting" + suffix)
	h.Telegram.Write(token, fake.TelegramChat{ID: chat, Type: "private", Name: "Ada"}, "/start "+code)
	b.waitFor(`#bind-status[data-bound="true"]`, 15*time.Second)
	b.check("bind-bound" + suffix)
	targets, err := h.Engine.Targets().List(ctx, push.System(), push.TargetFilter{BotID: bot.ID})
	if err != nil || len(targets.Items) != 1 || targets.Items[0].Address != strconv.FormatInt(chat, 10) {
		t.Fatalf("targets after binding: %+v %v", targets.Items, err)
	}
	target := targets.Items[0]
	b.open("/targets")
	b.check("targets" + suffix)
	// A test message to the new target: its job page follows it live.
	b.submit(`#target-`+strconv.FormatInt(target.ID, 10)+` form[action$="/test"] button`, "/jobs/")
	b.waitFor(`#job-state[data-state="succeeded"]`, 10*time.Second)
	if msgs := h.Telegram.Messages(); len(msgs) == 0 || msgs[len(msgs)-1].ChatID != strconv.FormatInt(chat, 10) || msgs[len(msgs)-1].Text != w["test.text"] {
		t.Fatalf("the chat received %+v", msgs)
	}

	// People: an invite into the account, shown once.
	b.open("/people")
	b.check("people" + suffix)
	b.fill("#invite-email", "grace@example.com")
	b.submit(`form[action="/invites"] button[type=submit]`, "/invites")
	if code := b.text("#invite-code"); len(code) < 8 || !strings.Contains(b.text("#invite-link"), "/signup?invite="+code) {
		t.Fatalf("the new invite: %q %q", code, b.text("#invite-link"))
	}
	b.check("invite-new" + suffix)

	// A key, shown once.
	b.open("/keys")
	b.check("keys-empty" + suffix)
	b.fill("#key-name", keyName)
	b.submit(`form[action="/keys"] button[type=submit]`, "/keys")
	key := b.text("#new-key")
	if len(key) < 20 || b.count("#new-key + button[data-copy]") != 1 {
		t.Fatalf("new key %q, copy buttons %d", key, b.count("#new-key + button[data-copy]"))
	}
	b.check("key-new" + suffix)
	b.open("/keys")
	if strings.Contains(b.text("main"), key) || !strings.Contains(b.text("main table"), keyName) {
		t.Fatalf("the keys after making one: the key shown again, or its name missing: %q", b.text("main table"))
	}
	b.check("keys" + suffix)

	// A send through the API, seen succeeding on its page.
	send := func(botID int64, targetID int64, content string) sent {
		t.Helper()
		r := testkit.Call(t, h.URL, "POST", "/openapi/v1/push/private", key, map[string]any{"botId": botID, "target": strconv.FormatInt(targetID, 10), "content": content})
		var s sent
		r.Decode(t, &s)
		if s.Data.JobID == "" {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		return s
	}
	ok := send(bot.ID, target.ID, "deploy finished")
	b.open("/jobs/" + ok.Data.JobID)
	b.waitFor(`#job-state[data-state="succeeded"]`, 10*time.Second)
	b.check("job-succeeded" + suffix)

	// An uncertain job, first on the dashboard, resolved with the warning.
	slowTok := slow.NewBot()
	slowBot := h.PlatformBot(t, acct, "telegram", map[string]any{"token": slowTok, "api_base": slow.URL()})
	slow.AddChat("555")
	slowTarget, err := h.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: slowBot.ID, Type: push.TargetUser, Address: "555"})
	if err != nil {
		t.Fatal(err)
	}
	slow.DropNext(1)
	lost := send(slowBot.ID, slowTarget.ID, "maybe delivered")
	h.WaitJob(t, lost.Data.JobID, push.StateUncertain, 10*time.Second)
	b.open("/")
	if got := b.text(".attention li"); !strings.Contains(got, lost.Data.JobID) {
		t.Fatalf("the dashboard's first job needing attention: %q, want the uncertain %s", got, lost.Data.JobID)
	}
	b.check("dashboard" + suffix)
	b.open("/jobs/" + lost.Data.JobID)
	if got := b.text(".note.warn strong"); got != w["job.resolve_warning"] {
		t.Fatalf("the resolve warning: %q", got)
	}
	b.check("job-uncertain" + suffix)
	b.do("pick succeeded", chromedp.Click(chromedp.CSS(`input[name=outcome][value=succeeded]`)))
	b.fill("#note", "seen in the chat")
	b.submit(`form[action$="/resolve"] button[type=submit]`, "/jobs/"+lost.Data.JobID)
	if j := h.WaitJob(t, lost.Data.JobID, push.StateSucceeded, time.Second); j.Note != "seen in the chat" || !strings.Contains(j.ResolvedBy, email) {
		t.Fatalf("resolved job: %+v", j)
	}
	b.check("job-resolved" + suffix)

	// A queued job canceled, its point back in the ledger. The one worker
	// is held by a send the slow server does not answer yet.
	slow.Block()
	busy := send(slowBot.ID, slowTarget.ID, "holds the worker")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		j, err := h.Engine.Jobs().Get(ctx, push.System(), busy.Data.JobID)
		if err != nil || j.State == push.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job that holds the worker is %s", j.State)
		}
	}
	queued := send(slowBot.ID, slowTarget.ID, "waits in the queue")
	b.open("/jobs?state=queued")
	b.check("jobs-queued" + suffix)
	b.submit(`a[href="/jobs/`+queued.Data.JobID+`"]`, "/jobs/"+queued.Data.JobID)
	b.submit(`form[action$="/cancel"] button`, "/jobs/"+queued.Data.JobID)
	if b.text("#job-state") != w["state.canceled"] {
		t.Fatalf("after canceling: %q", b.text("#job-state"))
	}
	slow.Unblock()
	b.open("/points")
	if n := b.count(`tr.ledger-refund a[href="/jobs/` + queued.Data.JobID + `"]`); n != 1 {
		t.Fatalf("%d refunds of the canceled job in the ledger, want 1", n)
	}
	if got, want := b.text("#balance"), strconv.FormatInt(h.Balance(t, acct), 10); got != want || want != "96" {
		t.Fatalf("balance %q, engine %s, want 96 (100, five sends, one refund)", got, want)
	}
	b.check("points" + suffix)
	b.open("/account")
	b.check("account" + suffix)
	b.open("/jobs")
	b.check("jobs" + suffix)
	if lang == "zh" && b.eval(`document.documentElement.lang === "zh-CN" ? 1 : 0`) != 1 {
		t.Fatal("the pages in Chinese are not marked zh-CN")
	}
	return life{tab: b, account: acct, lost: lost.Data.JobID, bot: bot}
}

// TestConsoleWithoutJavaScript: with scripts off in Chromium, the forms
// still work and an invite's page turns bound by refreshing itself.
func TestConsoleWithoutJavaScript(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newTab(t, h.Root)
	b.do("scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.open("/signin")
	b.fill("#email", "acme@example.com")
	b.fill("#password", testkit.Password)
	b.submit(`form[action="/signin"] button[type=submit]`, "/")
	if b.count("html.js") != 0 {
		t.Fatal("the console's script ran: scripts are not off")
	}
	// A key, shown once, without the copy button.
	b.open("/keys")
	b.submit(`form[action="/keys"] button[type=submit]`, "/keys")
	if key := b.text("#new-key"); len(key) < 20 || b.eval(`getComputedStyle(document.querySelector("#new-key + button")).display === "none" ? 1 : 0`) != 1 {
		t.Fatalf("the new key %q, or a copy button that cannot work is shown", key)
	}
	// An invite: the code's page, then the page that refreshes itself.
	b.open("/bots/" + strconv.FormatInt(m.bot.ID, 10))
	b.submit(`form[action$="/bind"] button`, "/bots/")
	code := b.text("#bind-code")
	b.submit(`a[href^="/binds/"]`, "/binds/")
	h.Telegram.Write(m.botToken, fake.TelegramChat{ID: 515151, Type: "private", Name: "Lin"}, "/start "+code)
	b.waitFor(`#bind-status.ok`, 15*time.Second)
	if got := b.text("#bind-status"); !strings.Contains(got, "Bound") {
		t.Fatalf("the invite's page: %q", got)
	}
	b.shot("bind-bound-nojs") // axe-core needs scripts; the same page is checked in TestConsoleInChromium
}
