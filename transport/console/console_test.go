package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
	"github.com/heraldpush/herald/transport/console"
)

// browserLike is an HTTP client with a cookie jar, as a browser without
// JavaScript: it follows redirects and sends forms.
type browserLike struct {
	base string
	c    *http.Client
}

func newBrowserLike(t *testing.T, h *testkit.Herald, token string) *browserLike {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(h.Root)
	if token != "" {
		jar.SetCookies(u, []*http.Cookie{{Name: transport.SessionCookie, Value: token, Path: "/"}})
	}
	return &browserLike{base: h.Root, c: &http.Client{Jar: jar}}
}

// page is an answer of the console.
type page struct {
	Status int
	Header http.Header
	Body   string
	URL    string // after redirects
}

func (b *browserLike) do(tb testing.TB, req *http.Request) page {
	tb.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(body), URL: resp.Request.URL.Path}
}

func (b *browserLike) get(tb testing.TB, path string) page {
	tb.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(tb, req)
}

// post sends a form with the token the given page's forms carry (from
// tokenPage; "" sends none), and extra headers.
func (b *browserLike) post(tb testing.TB, path string, form url.Values, tokenPage string, header ...string) page {
	tb.Helper()
	if tokenPage != "" {
		form.Set("csrf", formToken(tb, b.get(tb, tokenPage).Body))
	}
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(tb, req)
}

var tokenRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]{32})"`)

func formToken(tb testing.TB, body string) string {
	tb.Helper()
	m := tokenRe.FindStringSubmatch(body)
	if m == nil {
		tb.Fatalf("no form token on the page:\n%s", body)
	}
	return m[1]
}

// member is a signed-in member with a bot, a target, a key, a job, a
// bind code and the secrets behind them.
type member struct {
	acct     push.Account
	token    string // the session's
	key      string
	bot      push.Bot
	botToken string
	target   push.Target
	job      string
	bind     push.NewBindCode
	invite   push.Invite
	user     int64
}

func newMember(t *testing.T, h *testkit.Herald, name string) member {
	t.Helper()
	ctx := context.Background()
	a := h.Account(t, name)
	u := h.User(t, a.ID, name+"@example.com", push.RoleMember)
	tok := h.Telegram.NewBot()
	bot := h.PlatformBot(t, a.ID, "telegram", map[string]any{"token": tok, "api_base": h.Telegram.URL(), "receive": "poll"})
	target := h.Target(t, bot.ID, push.TargetUser, "")
	key := h.Key(t, a.ID)
	r := h.Call(t, "POST", "/openapi/v1/push/private", key, map[string]any{"botId": bot.ID, "target": strconv.FormatInt(target.ID, 10), "content": "hello"})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	bc, err := h.Engine.BindCodes().Create(ctx, push.System(), push.BindCodeCreate{BotID: bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	inv, _, err := h.Engine.Invites().Create(ctx, push.System(), push.InviteCreate{AccountID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := h.Engine.Jobs().List(ctx, push.System(), push.JobFilter{AccountID: a.ID})
	if err != nil || len(jobs.Items) != 1 {
		t.Fatalf("jobs %v %v", jobs, err)
	}
	return member{acct: a, token: h.SignIn(t, name+"@example.com"), key: key, bot: bot, botToken: tok, target: target, job: jobs.Items[0].ID, bind: bc, invite: inv, user: u.ID}
}

func newConsole(t *testing.T, opts ...testkit.Option) *testkit.Herald {
	t.Helper()
	return testkit.New(t, append([]testkit.Option{testkit.WithConsole(), testkit.WithPoints(push.Points{Enabled: true})}, opts...)...)
}

// memberPages are the pages of a member's objects, by their ids.
func memberPages(m member) []string {
	bot, target, bind := strconv.FormatInt(m.bot.ID, 10), strconv.FormatInt(m.target.ID, 10), strconv.FormatInt(m.bind.ID, 10)
	return []string{"/", "/bots", "/bots/new?platform=telegram", "/bots/" + bot, "/targets", "/keys", "/jobs", "/jobs/" + m.job,
		"/jobs?bot=" + bot + "&target=" + target, "/points", "/account", "/people", "/binds/" + bind}
}

// TestSecurityHeaders: every answer of the console, pages, refusals and
// assets, carries the strict policy, refuses frames, and pages are not
// cached.
func TestSecurityHeaders(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	for _, path := range append(memberPages(m), "/signin", "/signup", "/nope", "/static/console.css", "/static/console.js") {
		t.Run(path, func(t *testing.T) {
			p := b.get(t, path)
			want := map[string]int{"/nope": 404, "/signup": 403}[path] // sign-up is closed by default
			if want == 0 {
				want = 200
			}
			if p.Status != want {
				t.Fatalf("status %d:\n%s", p.Status, p.Body)
			}
			for k, want := range map[string]string{
				"Content-Security-Policy": console.ContentSecurityPolicy, "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
			} {
				if got := p.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			if !strings.Contains(console.ContentSecurityPolicy, "frame-ancestors 'none'") || !strings.Contains(console.ContentSecurityPolicy, "default-src 'self'") {
				t.Errorf("the policy lost a part: %s", console.ContentSecurityPolicy)
			}
			if !strings.HasPrefix(path, "/static/") && p.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", p.Header.Get("Cache-Control"))
			}
			if strings.Contains(p.Body, "style=") || regexp.MustCompile(`<script(?: [^>]*)?>[^<]`).MatchString(p.Body) || strings.Contains(p.Body, " on") && regexp.MustCompile(` on[a-z]+=`).MatchString(p.Body) {
				t.Errorf("the page has an inline style or script, which the policy refuses")
			}
		})
	}
}

// TestEveryFormCarriesItsToken: every POST form of every page carries the
// session's form token, and a form sent without it, with another
// session's, or from another site changes nothing.
func TestEveryFormCarriesItsToken(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	other := newMember(t, h, "other")
	b := newBrowserLike(t, h, m.token)
	formRe := regexp.MustCompile(`(?s)<form([^>]*)>(.*?)</form>`)
	forms := 0
	for _, path := range append(memberPages(m), "/signin", "/signup") {
		body := b.get(t, path).Body
		for _, f := range formRe.FindAllStringSubmatch(body, -1) {
			if !strings.Contains(f[1], `method="post"`) {
				continue
			}
			forms++
			if !tokenRe.MatchString(f[2]) {
				t.Errorf("%s: a form without its token: <form%s>", path, f[1])
			}
		}
	}
	if forms < 15 {
		t.Fatalf("only %d forms found: the scan is broken", forms)
	}
	keys := func() int {
		pg, err := h.Engine.Keys().List(context.Background(), push.System(), push.KeyFilter{AccountID: m.acct.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(pg.Items)
	}
	before := keys()
	otherToken := formToken(t, newBrowserLike(t, h, other.token).get(t, "/keys").Body)
	for _, tc := range []struct {
		name   string
		form   url.Values
		page   string
		header []string
	}{
		{"no token", url.Values{"name": {"x"}, "expires": {"0"}}, "", nil},
		{"another session's token", url.Values{"name": {"x"}, "expires": {"0"}, "csrf": {otherToken}}, "", nil},
		{"from another site", url.Values{"name": {"x"}, "expires": {"0"}}, "/keys", []string{"Sec-Fetch-Site", "cross-site"}},
		{"from another origin", url.Values{"name": {"x"}, "expires": {"0"}}, "/keys", []string{"Origin", "https://evil.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.post(t, "/keys", tc.form, tc.page, tc.header...)
			if p.Status != http.StatusForbidden {
				t.Fatalf("status %d, want 403:\n%s", p.Status, p.Body)
			}
			if !strings.Contains(p.Body, "another site") && !strings.Contains(p.Body, "reload the page") {
				t.Errorf("the refusal does not say why:\n%s", p.Body)
			}
			if n := keys(); n != before {
				t.Errorf("%d keys after a refused form, %d before", n, before)
			}
		})
	}
	// The same form with its token works: the refusals above were the token's.
	if p := b.post(t, "/keys", url.Values{"name": {"x"}, "expires": {"0"}}, "/keys"); p.Status != http.StatusCreated || keys() != before+1 {
		t.Fatalf("the form with its token: %d, %d keys", p.Status, keys())
	}
	// A sign-in form from another site is refused too (login CSRF).
	anon := newBrowserLike(t, h, "")
	p := anon.post(t, "/signin", url.Values{"email": {"acme@example.com"}, "password": {testkit.Password}}, "/signin", "Sec-Fetch-Site", "cross-site")
	if p.Status != http.StatusForbidden || p.URL != "/signin" {
		t.Fatalf("cross-site sign-in: %d at %s", p.Status, p.URL)
	}
}

// TestNoCredentialInAnyPage: the bot token, API keys, session tokens, bind
// codes and passwords never appear in a page, not even in the bot's own
// page or its forms.
func TestNoCredentialInAnyPage(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	secrets := map[string]string{"bot token": m.botToken, "API key": m.key, "session token": m.token, "bind code": m.bind.Code, "password": testkit.Password}
	for _, path := range memberPages(m) {
		body := b.get(t, path).Body
		for what, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("%s shows the %s", path, what)
			}
		}
	}
	// A refused credential change shows the form again without the value.
	p := b.post(t, "/bots/"+strconv.FormatInt(m.bot.ID, 10)+"/credentials", url.Values{"cfg.token": {"123:short"}}, "/bots/"+strconv.FormatInt(m.bot.ID, 10))
	if p.Status != http.StatusBadRequest || strings.Contains(p.Body, "123:short") || !strings.Contains(p.Body, "token") {
		t.Fatalf("refused credentials: %d\n%s", p.Status, p.Body)
	}
}

// TestMemberCannotOpenAnotherMembersPages: every route of the console
// with an object's id, tried by member B on member A's object (GET and
// POST alike), answers 404 and changes nothing; B's own lists show none of
// A's objects; the operators' pages answer B 404; the same pages answer A.
func TestMemberCannotOpenAnotherMembersPages(t *testing.T) {
	h := newConsole(t)
	ctx := context.Background()
	a := newMember(t, h, "alpha")
	bm := newMember(t, h, "beta")
	secret := "alpha-private-name"
	if _, err := h.Engine.Bots().Update(ctx, push.System(), a.bot.ID, push.BotUpdate{Name: &secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.Targets().Update(ctx, push.System(), a.target.ID, push.TargetUpdate{Name: &secret}); err != nil {
		t.Fatal(err)
	}
	keys, _ := h.Engine.Keys().List(ctx, push.System(), push.KeyFilter{AccountID: a.acct.ID})
	sessions, err := h.Engine.Sessions().List(ctx, push.Principal{AccountID: a.acct.ID, UserID: a.user, Role: push.RoleMember}, push.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{ // a route's prefix → A's object of that kind
		"/bots/": strconv.FormatInt(a.bot.ID, 10), "/targets/": strconv.FormatInt(a.target.ID, 10), "/jobs/": a.job,
		"/binds/": strconv.FormatInt(a.bind.ID, 10), "/keys/": strconv.FormatInt(keys.Items[0].ID, 10),
		"/invites/": strconv.FormatInt(a.invite.ID, 10), "/users/": strconv.FormatInt(a.user, 10),
		"/ops/accounts/": strconv.FormatInt(a.acct.ID, 10), "/account/sessions/": strconv.FormatInt(sessions.Items[0].ID, 10),
	}
	con, err := console.New(h.Engine, console.Options{})
	if err != nil {
		t.Fatal(err)
	}
	asB := newBrowserLike(t, h, bm.token)
	form := url.Values{"name": {"mine"}, "cfg.token": {"1:" + strings.Repeat("a", 35)}, "status": {"suspended"}, "amount": {"5"}, "reason": {"x"},
		"outcome": {"failed"}, "target": {strconv.FormatInt(a.target.ID, 10)}, "nonce": {strings.Repeat("ab", 16)}}
	tried := 0
	for _, pattern := range con.Routes() {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || strings.Contains(path, "{lang}") || path == "/" || strings.HasPrefix(path, "/static/") || path == "/signin" || path == "/signup" ||
			strings.HasSuffix(path, "/end-all") || path == "/signout" {
			continue // not an object's page, or one that acts on B's own sign-in
		}
		if strings.Contains(path, "{id}") {
			found := false
			for prefix, id := range ids {
				if strings.HasPrefix(path, prefix+"{id}") {
					path, found = strings.Replace(path, "{id}", id, 1), true
				}
			}
			if !found {
				t.Fatalf("no object of member A for %s: add its kind to this test", pattern)
			}
		}
		if path == "/bots/new" {
			path += "?platform=telegram"
		}
		tried++
		t.Run(pattern, func(t *testing.T) {
			var p page
			if method == "GET" {
				p = asB.get(t, strings.TrimSuffix(path, "{$}"))
			} else {
				p = asB.post(t, path, url.Values(cloneValues(form)), "/keys")
			}
			switch {
			case strings.Contains(pattern, "{id}") || strings.HasPrefix(path, "/ops/"):
				if p.Status != http.StatusNotFound {
					t.Fatalf("status %d, want 404:\n%s", p.Status, p.Body)
				}
			case method == "GET":
				if p.Status != http.StatusOK || strings.Contains(p.Body, secret) || strings.Contains(p.Body, "alpha@example.com") {
					t.Fatalf("B's own page: %d, or it shows A's objects:\n%s", p.Status, p.Body)
				}
			}
		})
	}
	if tried < 30 {
		t.Fatalf("only %d routes tried", tried)
	}
	// Nothing of A's changed, and A still sees every page.
	if b, err := h.Engine.Bots().Get(ctx, push.System(), a.bot.ID); err != nil || b.Name != secret {
		t.Errorf("A's bot: %+v %v", b, err)
	}
	if tg, err := h.Engine.Targets().Get(ctx, push.System(), a.target.ID); err != nil || tg.Name != secret {
		t.Errorf("A's target: %+v %v", tg, err)
	}
	if k, err := h.Engine.Keys().Get(ctx, push.System(), keys.Items[0].ID); err != nil || k.Revoked() {
		t.Errorf("A's key: %+v %v", k, err)
	}
	if acct, err := h.Engine.Accounts().Get(ctx, push.System(), a.acct.ID); err != nil || acct.Status != push.AccountActive || acct.Points != a.acct.Points-1 {
		t.Errorf("A's account: %+v %v", acct, err)
	}
	if inv, err := h.Engine.Invites().List(ctx, push.System(), push.InviteFilter{AccountID: a.acct.ID}); err != nil || !inv.Items[0].RevokedAt.IsZero() {
		t.Errorf("A's invite: %+v %v", inv, err)
	}
	if bc, err := h.Engine.BindCodes().Get(ctx, push.System(), a.bind.ID); err != nil || !bc.RevokedAt.IsZero() {
		t.Errorf("A's bind code: %+v %v", bc, err)
	}
	if _, err := h.Engine.Users().Get(ctx, push.System(), a.user); err != nil {
		t.Errorf("A's user: %v", err)
	}
	if _, err := h.Engine.Sessions().Authenticate(ctx, a.token); err != nil {
		t.Errorf("A's session: %v", err)
	}
	if n := len(h.Telegram.Messages()); n != 2 {
		t.Errorf("%d messages sent, want the 2 of the members' own sends", n)
	}
	asA := newBrowserLike(t, h, a.token)
	for _, path := range memberPages(a) {
		if p := asA.get(t, path); p.Status != http.StatusOK {
			t.Errorf("A: %s answers %d", path, p.Status)
		}
	}
}

func cloneValues(v url.Values) map[string][]string {
	out := make(map[string][]string, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// TestSignedOutVisitor: pages send a visitor without a session to the
// sign-in page and back; a form without a session is refused.
func TestSignedOutVisitor(t *testing.T) {
	h := newConsole(t)
	b := newBrowserLike(t, h, "")
	p := b.get(t, "/jobs?state=failed")
	if p.Status != 200 || p.URL != "/signin" || !strings.Contains(p.Body, `name="next" value="/jobs?state=failed"`) {
		t.Fatalf("signed out: %d at %s\n%s", p.Status, p.URL, p.Body)
	}
	if p := b.post(t, "/keys", url.Values{}, "/signin"); p.Status != http.StatusUnauthorized && p.Status != http.StatusForbidden {
		t.Fatalf("a form without a session: %d", p.Status)
	}
	// The API is not the console's: its unknown paths keep the JSON 404.
	r := h.CallRoot(t, "GET", "/api/nope")
	if r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("/api/nope: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}

// TestWithoutConsole: without the console, / is the API's JSON 404.
func TestWithoutConsole(t *testing.T) {
	h := testkit.New(t, testkit.WithTelegram(fake.NewTelegram(t)))
	r := h.CallRoot(t, "GET", "/")
	if r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("/: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}

// TestEveryPageHasItsRouteLabel: the console's requests are counted in
// /metrics under the console's route patterns, never as unmatched: pages,
// the 404 page, assets, forms and a form refused from another site.
func TestEveryPageHasItsRouteLabel(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	for _, path := range append(memberPages(m), "/signin", "/nope", "/static/console.css", "/lang/zh?next=/keys") {
		b.get(t, path)
	}
	b.post(t, "/keys", url.Values{"name": {"x"}, "expires": {"0"}}, "/keys")
	b.post(t, "/keys", url.Values{"name": {"x"}, "expires": {"0"}}, "/keys", "Sec-Fetch-Site", "cross-site")
	r := h.CallRoot(t, "GET", "/metrics")
	var lines []string
	for line := range strings.SplitSeq(string(r.Body), "\n") {
		if strings.HasPrefix(line, "herald_http_requests_total{") {
			lines = append(lines, line)
		}
	}
	all := strings.Join(lines, "\n")
	if strings.Contains(all, `route=""`) || strings.Contains(all, `route="unmatched"`) {
		t.Errorf("requests without their route:\n%s", all)
	}
	for _, want := range []string{
		`method="GET",route="/{$}",status="200"`, `method="GET",route="/bots/{id}",status="200"`, `method="GET",route="/jobs/{id}",status="200"`,
		`method="GET",route="/",status="404"`, `method="GET",route="/static/",status="200"`, `method="GET",route="/lang/{lang}",status="303"`,
		`method="POST",route="/keys",status="201"`, `method="POST",route="/keys",status="403"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no request counted as %s", want)
		}
	}
}

// TestDashboardCountsEveryJob: the dashboard's counts of today's sends are
// exact beyond a page of jobs.
func TestDashboardCountsEveryJob(t *testing.T) {
	h := newConsole(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{}), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond, BacklogPerBot: 2000, BacklogTotal: 4000}))
	a := h.Account(t, "busy")
	h.User(t, a.ID, "busy@example.com", push.RoleMember)
	bot := h.TelegramBot(t, a.ID)
	target := h.Target(t, bot.ID, push.TargetUser, "")
	const n = push.MaxPageSize + 5
	for range n {
		if _, err := h.Engine.Send(context.Background(), push.AccountPrincipal(a.ID), push.SendRequest{BotID: bot.ID, TargetID: target.ID, Message: push.Message{Type: push.MsgTypeText, Content: "count me"}}); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowserLike(t, h, h.SignIn(t, "busy@example.com"))
	p := b.get(t, "/")
	want := fmt.Sprintf(`<li class="state-queued"><a href="/jobs?state=queued"><span class="n">%d</span>`, n)
	if p.Status != 200 || !strings.Contains(p.Body, want) {
		t.Fatalf("dashboard %d: want %s in\n%s", p.Status, want, p.Body)
	}
}
