package transport_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

const signInPath = "/manage/v1/sessions"

// countingHasher counts the password checks of the engine's hasher.
type countingHasher struct {
	push.PasswordHasher
	verifies atomic.Int64
}

func (c *countingHasher) Verify(pw, hash string) (bool, bool, error) {
	c.verifies.Add(1)
	return c.PasswordHasher.Verify(pw, hash)
}

// errorOf returns the answer's error envelope without its request id.
func errorOf(t *testing.T, r testkit.Response) errAnswer {
	t.Helper()
	var e errAnswer
	r.Decode(t, &e)
	return e
}

// TestSignInAnswersUnknownEmailAsWrongPassword: an unknown email and a
// wrong password get the same status and body, and both check a password
// hash (an unknown email against a stand-in), so that neither the answer
// nor its time tells whether the email has a user.
func TestSignInAnswersUnknownEmailAsWrongPassword(t *testing.T) {
	var counter *countingHasher
	h := testkit.New(t, testkit.WithEngineOptions(func(o *push.Options) {
		counter = &countingHasher{PasswordHasher: o.Passwords}
		o.Passwords = counter
	}))
	a := h.Account(t, "acme")
	h.User(t, a.ID, "ada@example.com", push.RoleMember)
	counter.verifies.Store(0)
	wrong := h.Call(t, "POST", signInPath, "", map[string]any{"email": "ada@example.com", "password": "not the password at all"})
	afterWrong := counter.verifies.Load()
	unknown := h.Call(t, "POST", signInPath, "", map[string]any{"email": "nobody@example.com", "password": "not the password at all"})
	afterUnknown := counter.verifies.Load() - afterWrong
	if wrong.Status != http.StatusUnauthorized || unknown.Status != wrong.Status {
		t.Fatalf("wrong password %d, unknown email %d; want 401 for both", wrong.Status, unknown.Status)
	}
	if diff := cmp.Diff(errorOf(t, wrong), errorOf(t, unknown)); diff != "" {
		t.Fatalf("the answers differ (-wrong password +unknown email):\n%s", diff)
	}
	if afterWrong != 1 || afterUnknown != 1 {
		t.Fatalf("password checks: %d for a wrong password, %d for an unknown email; want 1 each", afterWrong, afterUnknown)
	}
	if wrong.Header.Get("Set-Cookie") != "" || unknown.Header.Get("Set-Cookie") != "" {
		t.Fatal("a refused sign-in set a cookie")
	}
}

// TestSignInThrottle: after three failures for an email the next attempts
// wait, longer after each failure (the right password too, so the wait
// tells nothing); once the wait passes the right password signs in, and
// the email's count starts again.
func TestSignInThrottle(t *testing.T) {
	h := testkit.New(t)
	a := h.Account(t, "acme")
	h.User(t, a.ID, "ada@example.com", push.RoleMember)
	try := func(pw string) testkit.Response {
		return h.Call(t, "POST", signInPath, "", map[string]any{"email": "ada@example.com", "password": pw})
	}
	for i := range 3 {
		if r := try("wrong password " + string(rune('a'+i))); r.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := try("wrong password d")
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("fourth failure: %d %s", r.Status, r.Body)
	}
	r = try(testkit.Password)
	if e := errorOf(t, r); r.Status != http.StatusTooManyRequests || e.Error != "signin_throttled" || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("the right password during the wait: %d %s (Retry-After %q), want 429 signin_throttled after 1 s", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	h.Clock.Advance(1100 * time.Millisecond)
	if r := try("wrong password e"); r.Status != http.StatusUnauthorized {
		t.Fatalf("fifth failure: %d", r.Status)
	}
	if r := try(testkit.Password); r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "2" {
		t.Fatalf("after the fifth failure: %d (Retry-After %q), want 429 for 2 s", r.Status, r.Header.Get("Retry-After"))
	}
	// Another email from the same address is not throttled by it.
	h.User(t, a.ID, "grace@example.com", push.RoleMember)
	if r := h.Call(t, "POST", signInPath, "", map[string]any{"email": "grace@example.com", "password": testkit.Password}); r.Status != http.StatusOK {
		t.Fatalf("another email: %d %s", r.Status, r.Body)
	}
	h.Clock.Advance(2100 * time.Millisecond)
	if r := try(testkit.Password); r.Status != http.StatusOK {
		t.Fatalf("after the wait: %d %s", r.Status, r.Body)
	}
	if r := try("wrong again"); r.Status != http.StatusUnauthorized {
		t.Fatalf("a failure after a success: %d, want 401 (the count starts again)", r.Status)
	}
}

// TestSessionCookie: the sign-in sets an HttpOnly, SameSite=Lax cookie,
// Secure when the server's public URL is https; the cookie authenticates
// the management API and not the send API.
func TestSessionCookie(t *testing.T) {
	for _, public := range []string{"", "https://herald.example.com"} {
		t.Run("public URL "+public, func(t *testing.T) {
			h := testkit.New(t, testkit.WithHTTP(func(o *transport.Options) { o.PublicURL = public }))
			a := h.Account(t, "acme")
			h.User(t, a.ID, "ada@example.com", push.RoleMember)
			r := h.Call(t, "POST", signInPath, "", map[string]any{"email": "Ada@Example.com ", "password": testkit.Password})
			if r.Status != http.StatusOK {
				t.Fatalf("sign-in: %d %s", r.Status, r.Body)
			}
			cookies := (&http.Response{Header: r.Header}).Cookies()
			if len(cookies) != 1 || cookies[0].Name != transport.SessionCookie || len(cookies[0].Value) < 40 {
				t.Fatalf("cookies %+v", cookies)
			}
			c := cookies[0]
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != (public != "") {
				t.Fatalf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, Secure=%v", c, public != "")
			}
			if strings.Contains(string(r.Body), c.Value) {
				t.Fatal("the answer's body shows the session token")
			}
			me := h.Call(t, "GET", "/manage/v1/me", "", nil, testkit.Cookie(c.Value)...)
			if me.Status != http.StatusOK || !strings.Contains(string(me.Body), `"email":"ada@example.com"`) {
				t.Fatalf("me: %d %s", me.Status, me.Body)
			}
			if r := h.Call(t, "GET", "/openapi/queue-request?key=k", "", nil, testkit.Cookie(c.Value)...); r.Status != http.StatusUnauthorized {
				t.Fatalf("the send API with a session cookie: %d, want 401 (it takes API keys only)", r.Status)
			}
		})
	}
}

// TestCrossSiteRequestsRefused: a request made with the session cookie
// from another site's page is refused when it changes anything, and
// changes nothing; reading is allowed, as is the same request with an API
// key (which a browser never sends by itself).
func TestCrossSiteRequestsRefused(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	h.User(t, f.Account.ID, "ada@example.com", push.RoleMember)
	token := h.SignIn(t, "ada@example.com")
	tests := []struct {
		name   string
		header []string
		status int
	}{
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"another origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"same origin", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusCreated},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"name": "key " + string(rune('a'+i))}
			r := h.Call(t, "POST", "/manage/v1/keys", "", body, append(testkit.Cookie(token), tt.header...)...)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.status == http.StatusForbidden && errorOf(t, r).Error != "cross_origin" {
				t.Fatalf("%s", r.Body)
			}
		})
	}
	keys, err := h.Engine.Keys().List(context.Background(), push.System(), push.KeyFilter{AccountID: f.Account.ID})
	if err != nil || len(keys.Items) != 2 { // the seed's and the same-origin one
		t.Fatalf("%d keys (%v), want 2: a refused request made one", len(keys.Items), err)
	}
	if r := h.Call(t, "GET", "/manage/v1/keys", "", nil, append(testkit.Cookie(token), "Sec-Fetch-Site", "cross-site")...); r.Status != http.StatusOK {
		t.Fatalf("a cross-site read: %d", r.Status)
	}
	if r := h.Call(t, "POST", "/manage/v1/keys", f.Key, map[string]any{"name": "by key"}, "Origin", "https://evil.example"); r.Status != http.StatusCreated {
		t.Fatalf("an API key from another origin: %d %s", r.Status, r.Body)
	}
	if r := h.Call(t, "POST", signInPath, "", map[string]any{"email": "ada@example.com", "password": testkit.Password}, "Sec-Fetch-Site", "cross-site"); r.Status != http.StatusForbidden {
		t.Fatalf("a cross-site sign-in: %d, want 403", r.Status)
	}
}

// TestSessionsEnd: a session ends when it is unused for the idle time, at
// its absolute end however used, when its user signs out everywhere, for
// the other sessions when the password changes, and at once when the
// account is suspended, on another node too.
func TestSessionsEnd(t *testing.T) {
	db := t.TempDir() + "/sessions.db"
	opts := func(o *push.Options) { o.Sessions = push.Sessions{Idle: time.Hour, Max: 3 * time.Hour} }
	h := testkit.New(t, testkit.WithDB(db), testkit.WithEngineOptions(opts))
	other := testkit.New(t, testkit.WithDB(db), testkit.WithEngineOptions(opts), testkit.WithoutStart())
	a := h.Account(t, "acme")
	h.User(t, a.ID, "ada@example.com", push.RoleMember)
	me := func(node *testkit.Herald, token string) testkit.Response {
		return node.Call(t, "GET", "/manage/v1/me", "", nil, testkit.Cookie(token)...)
	}
	wantEnded := func(node *testkit.Herald, token, reason string) {
		t.Helper()
		r := me(node, token)
		if e := errorOf(t, r); r.Status != http.StatusUnauthorized || e.Error != reason {
			t.Fatalf("%d %s, want 401 %s", r.Status, r.Body, reason)
		}
	}

	t.Run("idle", func(t *testing.T) {
		token := h.SignIn(t, "ada@example.com")
		h.Clock.Advance(59 * time.Minute)
		if r := me(h, token); r.Status != http.StatusOK {
			t.Fatalf("used within the idle time: %d", r.Status)
		}
		h.Clock.Advance(61 * time.Minute)
		wantEnded(h, token, "session_expired")
	})
	t.Run("absolute", func(t *testing.T) {
		token := h.SignIn(t, "ada@example.com")
		for range 4 { // used every 40 minutes: never idle
			h.Clock.Advance(40 * time.Minute)
			if r := me(h, token); r.Status != http.StatusOK {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		}
		h.Clock.Advance(40 * time.Minute) // 3 h 20 min after the sign-in
		wantEnded(h, token, "session_expired")
	})
	t.Run("sign out everywhere", func(t *testing.T) {
		one, two := h.SignIn(t, "ada@example.com"), h.SignIn(t, "ada@example.com")
		if r := h.Call(t, "DELETE", "/manage/v1/sessions", "", nil, testkit.Cookie(one)...); r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		wantEnded(h, one, "session_ended")
		wantEnded(other, two, "session_ended")
	})
	t.Run("password change ends the others", func(t *testing.T) {
		one, two := h.SignIn(t, "ada@example.com"), h.SignIn(t, "ada@example.com")
		r := h.Call(t, "PUT", "/manage/v1/me/password", "", map[string]any{"current": testkit.Password, "new": "four other unrelated words"}, testkit.Cookie(one)...)
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := me(h, one); r.Status != http.StatusOK {
			t.Fatalf("the session that changed the password: %d", r.Status)
		}
		wantEnded(other, two, "session_ended")
		if r := h.Call(t, "POST", signInPath, "", map[string]any{"email": "ada@example.com", "password": testkit.Password}); r.Status != http.StatusUnauthorized {
			t.Fatalf("the old password: %d", r.Status)
		}
		r = h.Call(t, "PUT", "/manage/v1/me/password", "", map[string]any{"current": "four other unrelated words", "new": testkit.Password}, testkit.Cookie(one)...)
		if r.Status != http.StatusOK {
			t.Fatalf("changing it back: %d %s", r.Status, r.Body)
		}
	})
	t.Run("suspension ends them on every node", func(t *testing.T) {
		token := h.SignIn(t, "ada@example.com")
		if r := me(other, token); r.Status != http.StatusOK {
			t.Fatalf("before: %d", r.Status)
		}
		st := push.AccountSuspended
		if _, err := h.Engine.Accounts().Update(context.Background(), push.System(), a.ID, push.AccountUpdate{Status: &st}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Second)
		for {
			r := me(other, token)
			if r.Status == http.StatusForbidden && errorOf(t, r).Error == "account_suspended" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the other node still answers %d a second after the suspension", r.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if r := h.Call(t, "POST", signInPath, "", map[string]any{"email": "ada@example.com", "password": testkit.Password}); r.Status != http.StatusForbidden {
			t.Fatalf("a sign-in to a suspended account: %d", r.Status)
		}
	})
}

// TestFirstSignInGrantsInitialPointsOnce: an account made by sign-up has
// no points until its first sign-in, which grants the initial points once
// however many sign-ins race, on one node or on two; the ledger records
// the grant and sums to the balance. An account an operator made got them
// at creation, and a sign-in grants nothing more.
func TestFirstSignInGrantsInitialPointsOnce(t *testing.T) {
	db := t.TempDir() + "/points.db"
	h := testkit.New(t, testkit.WithDB(db), testkit.WithPoints(push.Points{Enabled: true}))
	other := testkit.New(t, testkit.WithDB(db), testkit.WithPoints(push.Points{Enabled: true}), testkit.WithoutStart())
	ctx := context.Background()
	// An account as sign-up makes it: no points, no initial row, a user.
	acct := push.Account{Name: "signed up", Status: push.AccountActive, CreatedAt: time.Now()}
	if err := h.Store.CreateAccount(ctx, &acct); err != nil {
		t.Fatal(err)
	}
	hash, _ := testkit.Hasher().Hash(testkit.Password)
	u := push.User{AccountID: acct.ID, Email: "ada@example.com", Role: push.RoleMember, PasswordHash: hash, CreatedAt: time.Now(), PasswordChangedAt: time.Now()}
	if err := h.Store.CreateUser(ctx, &u); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range 8 {
		node := h
		if i%2 == 1 {
			node = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := node.Call(t, "POST", signInPath, "", map[string]any{"email": "ada@example.com", "password": testkit.Password})
			if r.Status == http.StatusOK {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 8 {
		t.Fatalf("%d of 8 sign-ins succeeded", ok.Load())
	}
	ledger, err := h.Engine.Ledger().List(ctx, push.System(), push.LedgerFilter{AccountID: acct.ID})
	if err != nil {
		t.Fatal(err)
	}
	var initial, sum int64
	for _, e := range ledger.Items {
		sum += e.Amount
		if e.Kind == push.LedgerInitial {
			initial++
		}
	}
	if balance := h.Balance(t, acct.ID); initial != 1 || balance != 100 || sum != balance {
		t.Fatalf("%d initial grants, balance %d, ledger sum %d; want 1 grant of 100", initial, balance, sum)
	}
	// An operator's account: points at creation, none at sign-in.
	made := h.Account(t, "made")
	h.User(t, made.ID, "grace@example.com", push.RoleMember)
	h.SignIn(t, "grace@example.com")
	if b := h.Balance(t, made.ID); b != 100 {
		t.Fatalf("an operator's account has %d points after a sign-in, want 100", b)
	}
}
