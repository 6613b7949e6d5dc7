package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// The console's forms as a browser without JavaScript sends them.

// TestSendATestMessage: the targets page's form sends one message to the
// target, charged, and shows its job; the same form sent again (a reload)
// sends nothing more.
func TestSendATestMessage(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	body := b.get(t, "/targets").Body
	nonce := regexp.MustCompile(`name="target" value="` + strconv.FormatInt(m.target.ID, 10) + `"><input type="hidden" name="nonce" value="([0-9a-f]{32})"`).FindStringSubmatch(body)
	if nonce == nil {
		t.Fatalf("no test form for the target:\n%s", body)
	}
	form := url.Values{"target": {strconv.FormatInt(m.target.ID, 10)}, "nonce": {nonce[1]}, "csrf": {formToken(t, body)}}
	for i := range 2 {
		p := b.post(t, "/bots/"+strconv.FormatInt(m.bot.ID, 10)+"/test", form, "")
		if p.Status != http.StatusOK || !strings.HasPrefix(p.URL, "/jobs/") || !strings.Contains(p.Body, "The test message is sent") || !strings.Contains(p.Body, `data-state="succeeded"`) {
			t.Fatalf("send %d: %d at %s\n%s", i+1, p.Status, p.URL, p.Body)
		}
	}
	msgs := h.Telegram.Messages()
	if len(msgs) != 2 || msgs[1].ChatID != m.target.Address || !strings.Contains(msgs[1].Text, "test message") {
		t.Fatalf("the platform received %+v, want the member's send and one test message", msgs)
	}
	if got := h.Balance(t, m.acct.ID); got != 98 {
		t.Fatalf("balance %d, want 98", got)
	}
}

// TestInviteIntoAccount: a member makes an invite (shown once, with its
// sign-up link); a person signs up with it and joins the member's
// account, on a server where sign-up needs an invite.
func TestInviteIntoAccount(t *testing.T) {
	h := newConsole(t, testkit.WithEngineOptions(func(o *push.Options) { o.Sessions.SignUp = push.SignUpInvite }))
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	p := b.post(t, "/invites", url.Values{"email": {"grace@example.com"}}, "/people")
	code := regexp.MustCompile(`<code id="invite-code">([A-Z0-9]+)</code>`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusCreated || code == nil || !strings.Contains(p.Body, h.Root+"/signup?invite="+code[1]) {
		t.Fatalf("invite: %d\n%s", p.Status, p.Body)
	}
	if strings.Contains(b.get(t, "/people").Body, code[1]) {
		t.Fatal("the invite code is shown again")
	}
	visitor := newBrowserLike(t, h, "")
	if p := visitor.get(t, "/signup?invite="+code[1]); p.Status != 200 || !strings.Contains(p.Body, `value="`+code[1]+`"`) {
		t.Fatalf("the sign-up link: %d\n%s", p.Status, p.Body)
	}
	form := url.Values{"email": {"grace@example.com"}, "password": {"another long passphrase"}, "password2": {"another long passphrase"}}
	if p := visitor.post(t, "/signup", form, "/signup"); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "invite code") {
		t.Fatalf("sign-up without the code: %d\n%s", p.Status, p.Body)
	}
	form.Set("invite", code[1])
	if p := visitor.post(t, "/signup", form, "/signup"); p.Status != 200 || p.URL != "/" || !strings.Contains(p.Body, "grace@example.com") {
		t.Fatalf("sign-up with the code: %d at %s\n%s", p.Status, p.URL, p.Body)
	}
	us, err := h.Engine.Users().List(context.Background(), push.System(), push.UserFilter{AccountID: m.acct.ID})
	if err != nil || len(us.Items) != 2 {
		t.Fatalf("the account's users: %+v %v", us.Items, err)
	}
	// The code works once.
	again := newBrowserLike(t, h, "")
	form.Set("email", "eve@example.com")
	if p := again.post(t, "/signup", form, "/signup"); p.Status != http.StatusForbidden {
		t.Fatalf("the code used again: %d", p.Status)
	}
}

// TestOperatorPages: an operator makes an account, grants it points with a
// reason, suspends it (its member's session ends at once), activates it,
// and reads the audit trail; a member is answered 404 on those pages.
func TestOperatorPages(t *testing.T) {
	h := newConsole(t)
	ctx := context.Background()
	ops := h.Account(t, "ops")
	h.User(t, ops.ID, "op@example.com", push.RoleOperator)
	op := newBrowserLike(t, h, h.SignIn(t, "op@example.com"))
	m := newMember(t, h, "acme")
	member := newBrowserLike(t, h, m.token)
	for _, path := range []string{"/ops/accounts", "/ops/audit"} {
		if p := member.get(t, path); p.Status != http.StatusNotFound {
			t.Fatalf("member: %s answers %d", path, p.Status)
		}
	}
	if p := op.post(t, "/ops/accounts", url.Values{"name": {"newco"}}, "/ops/accounts"); p.Status != 200 || !strings.Contains(p.Body, "newco") {
		t.Fatalf("make an account: %d\n%s", p.Status, p.Body)
	}
	id := strconv.FormatInt(m.acct.ID, 10)
	if p := op.post(t, "/ops/accounts/"+id+"/grant", url.Values{"amount": {"50"}, "reason": {"invoice 11"}}, "/ops/accounts"); p.Status != 200 || h.Balance(t, m.acct.ID) != 149 {
		t.Fatalf("grant: %d, balance %d\n%s", p.Status, h.Balance(t, m.acct.ID), p.Body)
	}
	if p := op.post(t, "/ops/accounts/"+id+"/grant", url.Values{"amount": {"lots"}, "reason": {"x"}}, "/ops/accounts"); p.Status != http.StatusBadRequest || h.Balance(t, m.acct.ID) != 149 {
		t.Fatalf("a bad amount: %d, balance %d", p.Status, h.Balance(t, m.acct.ID))
	}
	if p := member.get(t, "/points"); !strings.Contains(p.Body, "invoice 11") {
		t.Fatalf("the grant's reason is not in the member's ledger:\n%s", p.Body)
	}
	if p := op.post(t, "/ops/accounts/"+id+"/status", url.Values{"status": {"suspended"}}, "/ops/accounts"); p.Status != 200 || !strings.Contains(p.Body, "suspended") {
		t.Fatalf("suspend: %d\n%s", p.Status, p.Body)
	}
	if p := member.get(t, "/keys"); p.URL != "/signin" || !strings.Contains(p.Body, "Your session has ended") {
		t.Fatalf("the suspended member's page: %d at %s", p.Status, p.URL)
	}
	op.post(t, "/ops/accounts/"+id+"/status", url.Values{"status": {"active"}}, "/ops/accounts")
	if a, err := h.Engine.Accounts().Get(ctx, push.System(), m.acct.ID); err != nil || a.Status != push.AccountActive {
		t.Fatalf("after activating: %+v %v", a, err)
	}
	if p := op.get(t, "/people"); !strings.Contains(p.Body, "acme@example.com") || !strings.Contains(p.Body, "op@example.com") {
		t.Errorf("the operator's people page lacks another account's user:\n%s", p.Body)
	}
	// A reset password is shown once and works; the user's sessions end.
	users, _ := h.Engine.Users().List(ctx, push.System(), push.UserFilter{AccountID: m.acct.ID})
	uid := strconv.FormatInt(users.Items[0].ID, 10)
	p := op.post(t, "/users/"+uid+"/password", url.Values{}, "/people")
	pw := regexp.MustCompile(`<code id="new-password">([^<]+)</code>`).FindStringSubmatch(p.Body)
	if p.Status != 200 || pw == nil {
		t.Fatalf("reset: %d\n%s", p.Status, p.Body)
	}
	if strings.Contains(op.get(t, "/people").Body, pw[1]) {
		t.Fatal("the new password is shown again")
	}
	_, memberToken, _, err := h.Engine.Sessions().SignIn(ctx, push.SignIn{Email: "acme@example.com", Password: pw[1], Address: "127.0.0.1"})
	if err != nil {
		t.Fatalf("sign in with the new password: %v", err)
	}
	// A member cannot reset passwords, even its own account's, and
	// nobody removes themselves.
	if p := newBrowserLike(t, h, memberToken).post(t, "/users/"+uid+"/password", url.Values{}, "/people"); p.Status != http.StatusForbidden {
		t.Fatalf("a member resets a password: %d", p.Status)
	}
	self, _ := h.Engine.Users().List(ctx, push.System(), push.UserFilter{AccountID: ops.ID})
	if p := op.post(t, "/users/"+strconv.FormatInt(self.Items[0].ID, 10)+"/remove", url.Values{}, "/people"); p.Status != http.StatusBadRequest {
		t.Fatalf("removing oneself: %d", p.Status)
	}
	// Every account's jobs, or one account's, for an operator; a member's
	// account filter is not read.
	if p := op.get(t, "/jobs?account=all"); !strings.Contains(p.Body, m.job) {
		t.Errorf("the operator's jobs of every account lack the member's job")
	}
	if p := op.get(t, "/jobs?account="+id); !strings.Contains(p.Body, m.job) {
		t.Errorf("the operator's jobs of the member's account lack its job")
	}
	if p := op.get(t, "/jobs"); strings.Contains(p.Body, m.job) {
		t.Errorf("the operator's own jobs show the member's job")
	}
	audit := op.get(t, "/ops/audit").Body
	for _, want := range []string{"account.create", "op@example.com"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit trail lacks %q", want)
		}
	}
}

// TestRefusalsSayWhatToDo: a form a person can fix comes back with the
// engine's message and a 4xx, and changes nothing.
func TestRefusalsSayWhatToDo(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	botPath := "/bots/" + strconv.FormatInt(m.bot.ID, 10)
	for _, tc := range []struct {
		name, path string
		form       url.Values
		status     int
		says       string
	}{
		{"wrong sign-in", "/signin", url.Values{"email": {"acme@example.com"}, "password": {"wrong"}}, 401, "the email or the password is wrong"},
		{"empty bot name", botPath + "/rename", url.Values{"name": {""}}, 400, "name"},
		{"bad token", "/bots", url.Values{"platform": {"telegram"}, "name": {"x"}, "cfg.token": {"nope"}}, 400, "token"},
		{"unknown platform", "/bots", url.Values{"platform": {"carrier-pigeon"}, "name": {"x"}}, 400, "no platform"},
		{"password mismatch", "/account/password", url.Values{"current": {testkit.Password}, "new": {"one long password"}, "new2": {"another"}}, 400, "differ"},
		{"wrong current password", "/account/password", url.Values{"current": {"nope"}, "new": {"one long password"}, "new2": {"one long password"}}, 403, "current password is wrong"},
		{"bad expiry", "/keys", url.Values{"expires": {"-3"}}, 400, "lifetimes"},
		{"resolve a succeeded job", "/jobs/" + m.job + "/resolve", url.Values{"outcome": {"failed"}}, 409, "only uncertain jobs"},
		{"cancel a succeeded job", "/jobs/" + m.job + "/cancel", nil, 409, "only queued jobs"},
		{"bad job filter", "/jobs?since=yesterday", nil, 400, "not a date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p page
			if tc.form == nil && strings.Contains(tc.path, "?") {
				p = b.get(t, tc.path)
			} else {
				if tc.form == nil {
					tc.form = url.Values{}
				}
				if tc.path == "/signin" { // a form shown before sign-in
					p = newBrowserLike(t, h, "").post(t, tc.path, tc.form, "/signin")
				} else {
					p = b.post(t, tc.path, tc.form, "/keys")
				}
			}
			if p.Status != tc.status || !strings.Contains(p.Body, tc.says) {
				t.Fatalf("%d, want %d saying %q:\n%s", p.Status, tc.status, tc.says, p.Body)
			}
		})
	}
	ctx := context.Background()
	if bot, err := h.Engine.Bots().Get(ctx, push.System(), m.bot.ID); err != nil || bot.Name != m.bot.Name {
		t.Errorf("the bot changed: %+v %v", bot, err)
	}
	if bots, _ := h.Engine.Bots().List(ctx, push.System(), push.BotFilter{AccountID: m.acct.ID}); len(bots.Items) != 1 {
		t.Errorf("%d bots", len(bots.Items))
	}
	if _, err := h.Engine.Sessions().Authenticate(ctx, m.token); err != nil {
		t.Errorf("the session ended: %v", err)
	}
}

// TestHealthPage: an operator sees the numbers /metrics serves (the
// backlog, jobs settled by outcome, the workers); a member gets 404.
func TestHealthPage(t *testing.T) {
	h := newConsole(t)
	ops := h.Account(t, "ops")
	h.User(t, ops.ID, "op@example.com", push.RoleOperator)
	m := newMember(t, h, "acme")
	if p := newBrowserLike(t, h, m.token).get(t, "/ops/health"); p.Status != http.StatusNotFound {
		t.Fatalf("member: %d", p.Status)
	}
	p := newBrowserLike(t, h, h.SignIn(t, "op@example.com")).get(t, "/ops/health")
	for _, want := range []string{
		`<code>herald_backlog_jobs</code></td><td><code></code></td><td class="num">0</td>`,
		`<code>herald_jobs_settled_total</code></td><td><code>platform=&#34;telegram&#34;,state=&#34;succeeded&#34;</code></td><td class="num">1</td>`,
		`<code>herald_workers</code></td><td><code></code></td><td class="num">4</td>`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the health page lacks %s", want)
		}
	}
	if p.Status != 200 || t.Failed() {
		t.Fatalf("%d\n%s", p.Status, p.Body)
	}
}

// TestNewBotFormOfEveryPlatform: every platform's new-bot form renders,
// from its described fields (each labeled and explained, in both
// languages) or as a JSON config; a secret field is a password input.
func TestNewBotFormOfEveryPlatform(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	described := 0
	for _, name := range h.Engine.PlatformNames() {
		if pl, _ := h.Engine.Platform(name); pl != nil {
			if _, ok := pl.(push.ConfigDescriber); ok {
				described++
			}
		}
		for _, lang := range []string{"en", "zh"} {
			t.Run(name+"/"+lang, func(t *testing.T) {
				b.get(t, "/lang/"+lang)
				p := b.get(t, "/bots/new?platform="+name)
				if p.Status != 200 || !tokenRe.MatchString(p.Body) {
					t.Fatalf("%d\n%s", p.Status, p.Body)
				}
				pl, _ := h.Engine.Platform(name)
				d, ok := pl.(push.ConfigDescriber)
				if !ok {
					if !strings.Contains(p.Body, `<textarea id="config" name="config"`) {
						t.Fatalf("no JSON config field:\n%s", p.Body)
					}
					return
				}
				if !strings.Contains(p.Body, `href="`+d.SetupGuide()+`"`) {
					t.Errorf("no link to the setup guide %s", d.SetupGuide())
				}
				for _, f := range d.ConfigFields() {
					id := "cfg-" + f.Name
					if !strings.Contains(p.Body, `<label for="`+id+`">`) || !strings.Contains(p.Body, `<p id="`+id+`-help" class="help">`) {
						t.Errorf("field %s is not labeled and explained", f.Name)
					}
					if strings.Contains(p.Body, `<p id="`+id+`-help" class="help"></p>`) || strings.Contains(p.Body, "field."+name+"."+f.Name) {
						t.Errorf("field %s has no words in %s", f.Name, lang)
					}
					if f.Secret && !strings.Contains(p.Body, `id="`+id+`" name="cfg.`+f.Name+`" type="password"`) {
						t.Errorf("secret field %s is not a password input", f.Name)
					}
				}
			})
		}
	}
	if described < 5 {
		t.Fatalf("only %d platforms describe their fields", described)
	}
}

// TestPagesAreRateLimited: a person's pages count against the per-person
// rate limit of the management API; past it, a 429 page says when to come
// back, and nothing is done.
func TestPagesAreRateLimited(t *testing.T) {
	h := newConsole(t, testkit.WithLimits(push.Limits{RatePerMinute: 5}))
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	for i := range 5 {
		if p := b.get(t, "/keys"); p.Status != 200 {
			t.Fatalf("page %d: %d", i+1, p.Status)
		}
	}
	p := b.get(t, "/keys")
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" || !strings.Contains(p.Body, "too many requests") {
		t.Fatalf("past the limit: %d %v\n%s", p.Status, p.Header, p.Body)
	}
	// The invite's status, which its page polls, is not counted.
	if p := b.get(t, "/binds/"+strconv.FormatInt(m.bind.ID, 10)+"/status"); p.Status != 200 || !strings.Contains(p.Body, `"bound":false`) {
		t.Fatalf("the polled status: %d %s", p.Status, p.Body)
	}
}

// TestSessionsAndPassword: the account page ends one other session, the
// password change ends the others and keeps this one, and "sign out
// everywhere" ends them all.
func TestSessionsAndPassword(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	ctx := context.Background()
	other, third := h.SignIn(t, "acme@example.com"), h.SignIn(t, "acme@example.com")
	b := newBrowserLike(t, h, m.token)
	alive := func(tok string) bool { _, err := h.Engine.Sessions().Authenticate(ctx, tok); return err == nil }
	sessions, err := h.Engine.Sessions().List(ctx, push.Principal{AccountID: m.acct.ID, UserID: m.user, Role: push.RoleMember}, push.SessionFilter{})
	if err != nil || len(sessions.Items) != 3 {
		t.Fatalf("sessions: %+v %v", sessions.Items, err)
	}
	body := b.get(t, "/account").Body
	if n := strings.Count(body, `action="/account/sessions/`); n != 4 { // three sessions and "everywhere"
		t.Fatalf("%d session forms on the account page, want 4", n)
	}
	// The newest listed first is the third sign-in: end it.
	if p := b.post(t, "/account/sessions/"+strconv.FormatInt(sessions.Items[0].ID, 10)+"/end", url.Values{}, "/account"); p.Status != 200 || p.URL != "/account" {
		t.Fatalf("end a session: %d at %s", p.Status, p.URL)
	}
	if alive(third) || !alive(other) || !alive(m.token) {
		t.Fatalf("after ending one: third %v, other %v, this %v", alive(third), alive(other), alive(m.token))
	}
	form := url.Values{"current": {testkit.Password}, "new": {"a brand new passphrase"}, "new2": {"a brand new passphrase"}}
	if p := b.post(t, "/account/password", form, "/account"); p.Status != 200 || !strings.Contains(p.Body, "Your password is changed") {
		t.Fatalf("change the password: %d\n%s", p.Status, p.Body)
	}
	if alive(other) || !alive(m.token) {
		t.Fatalf("after the change: other %v, this %v", alive(other), alive(m.token))
	}
	if p := b.post(t, "/account/name", url.Values{"name": {"Acme Ltd"}}, "/account"); p.Status != 200 || !strings.Contains(p.Body, `value="Acme Ltd"`) {
		t.Fatalf("rename the account: %d\n%s", p.Status, p.Body)
	}
	if p := b.post(t, "/account/name", url.Values{"name": {""}}, "/account"); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `value="Acme Ltd"`) {
		t.Fatalf("an empty name: %d\n%s", p.Status, p.Body)
	}
	if p := b.post(t, "/account/sessions/end-all", url.Values{}, "/account"); p.URL != "/signin" || alive(m.token) {
		t.Fatalf("everywhere: at %s, this session alive %v", p.URL, alive(m.token))
	}
}

// TestDashboard: today's sends by outcome, and the jobs that need
// attention with the uncertain ones first.
func TestDashboard(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	h.Telegram.Fail(fake.TelegramFault{Status: 400, Description: "Bad Request: chat not found"})
	failed := h.Call(t, "POST", "/openapi/v1/push/private", m.key, map[string]any{"botId": m.bot.ID, "target": strconv.FormatInt(m.target.ID, 10), "content": "refused"})
	h.Telegram.DropNext(1)
	lost := h.Call(t, "POST", "/openapi/v1/push/private", m.key, map[string]any{"botId": m.bot.ID, "target": strconv.FormatInt(m.target.ID, 10), "content": "lost"})
	ids := func(r testkit.Response) string { return r.JSON()["data"].(map[string]any)["jobId"].(string) }
	body := newBrowserLike(t, h, m.token).get(t, "/").Body
	for state, n := range map[string]int{"succeeded": 1, "failed": 1, "uncertain": 1, "queued": 0} {
		if !strings.Contains(body, `<li class="state-`+state+`"><a href="/jobs?state=`+state+`"><span class="n">`+strconv.Itoa(n)+`</span>`) {
			t.Errorf("today's %s count is not %d", state, n)
		}
	}
	u, f := strings.Index(body, `href="/jobs/`+ids(lost)+`"`), strings.Index(body, `href="/jobs/`+ids(failed)+`"`)
	if u < 0 || f < 0 || u > f {
		t.Fatalf("the jobs needing attention: uncertain at %d, failed at %d, want both, uncertain first\n%s", u, f, body)
	}
}

// TestBindByAddress: a target bound from the bot's page by its chat id
// shows in the targets; a bad address comes back with the platform's
// words and binds nothing.
func TestBindByAddress(t *testing.T) {
	h := newConsole(t)
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	bot := "/bots/" + strconv.FormatInt(m.bot.ID, 10)
	p := b.post(t, bot+"/targets", url.Values{"type": {"group"}, "address": {"12345"}, "name": {"ops room"}}, bot)
	if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "negative") || !strings.Contains(p.Body, `value="ops room"`) {
		t.Fatalf("a bad address: %d\n%s", p.Status, p.Body)
	}
	p = b.post(t, bot+"/targets", url.Values{"type": {"group"}, "address": {"-100200300"}, "name": {"ops room"}}, bot)
	if p.Status != 200 || p.URL != "/targets" || !strings.Contains(p.Body, `value="ops room"`) || !strings.Contains(p.Body, "-100200300") {
		t.Fatalf("bind: %d at %s\n%s", p.Status, p.URL, p.Body)
	}
	ts, err := h.Engine.Targets().List(context.Background(), push.System(), push.TargetFilter{BotID: m.bot.ID})
	if err != nil || len(ts.Items) != 2 {
		t.Fatalf("targets: %+v %v", ts.Items, err)
	}
}

// TestBotFormTypesItsFields: a form's number, list and yes/no fields reach
// the platform as the JSON types its config takes: a Gotify priority as a
// number, DingTalk keywords as a list (a message without one is refused),
// QQ's sandbox as a checkbox; a number that is not one is refused, naming
// the field, and makes no bot.
func TestBotFormTypesItsFields(t *testing.T) {
	h := newConsole(t, testkit.WithPoints(push.Points{}))
	m := newMember(t, h, "acme")
	b := newBrowserLike(t, h, m.token)
	send := func(t *testing.T, bot int64, content string) testkit.Response {
		t.Helper()
		return h.Call(t, "POST", "/openapi/v1/push/private", m.key, map[string]any{"botId": bot, "content": content})
	}
	create := func(t *testing.T, platform string, form url.Values) int64 {
		t.Helper()
		form.Set("platform", platform)
		form.Set("name", platform)
		p := b.post(t, "/bots", form, "/bots/new?platform="+platform)
		id, err := strconv.ParseInt(strings.TrimPrefix(p.URL, "/bots/"), 10, 64)
		if p.Status != 200 || err != nil {
			t.Fatalf("create a %s bot: %d at %s\n%s", platform, p.Status, p.URL, p.Body)
		}
		return id
	}

	t.Run("number", func(t *testing.T) {
		g := fake.NewGotify(t)
		bot := create(t, "gotify", url.Values{"cfg.server": {g.URL()}, "cfg.token": {g.NewApp("herald")}, "cfg.priority": {"7"}})
		if r := send(t, bot, "deployed"); r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		if msgs := g.Messages(); len(msgs) != 1 || msgs[0].Priority != 7 {
			t.Fatalf("Gotify received %+v, want one message of priority 7", msgs)
		}
		bots, _ := h.Engine.Bots().List(context.Background(), push.System(), push.BotFilter{AccountID: m.acct.ID})
		p := b.post(t, "/bots", url.Values{"platform": {"gotify"}, "name": {"bad"}, "cfg.server": {g.URL()}, "cfg.token": {"x"}, "cfg.priority": {"seven"}}, "/bots/new?platform=gotify")
		if p.Status != 400 || !strings.Contains(p.Body, "Priority must be a whole number") {
			t.Fatalf("priority seven: %d\n%s", p.Status, p.Body)
		}
		if after, _ := h.Engine.Bots().List(context.Background(), push.System(), push.BotFilter{AccountID: m.acct.ID}); len(after.Items) != len(bots.Items) {
			t.Fatalf("a refused form made a bot: %d bots, was %d", len(after.Items), len(bots.Items))
		}
	})

	t.Run("list", func(t *testing.T) {
		d := fake.NewDingTalk(t)
		token, _ := d.NewRobot(fake.DingTalkSecurity{Keywords: []string{"deploy", "alert"}})
		bot := create(t, "dingtalk", url.Values{"cfg.access_token": {token}, "cfg.api_base": {d.URL()}, "cfg.keywords": {"deploy\r\n alert ,"}})
		if r := send(t, bot, "hello"); r.Status != 400 || !strings.Contains(string(r.Body), "keyword") {
			t.Fatalf("a message without a keyword: %d %s, want 400 naming the keywords", r.Status, r.Body)
		}
		if r := send(t, bot, "alert: disk full"); r.Status != 200 {
			t.Fatalf("a message with a keyword: %d %s", r.Status, r.Body)
		}
		if msgs := d.Messages(); len(msgs) != 1 || msgs[0].Content != "alert: disk full" {
			t.Fatalf("DingTalk received %+v", msgs)
		}
	})

	t.Run("bool", func(t *testing.T) {
		p := b.get(t, "/bots/new?platform=qq")
		if !strings.Contains(p.Body, `id="cfg-sandbox" name="cfg.sandbox" type="checkbox" value="true"`) {
			t.Fatalf("QQ's sandbox is not a checkbox:\n%s", p.Body)
		}
	})
}
