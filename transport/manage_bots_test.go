package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// data decodes the data of a management answer into v.
func dataOf(t *testing.T, r testkit.Response, v any) {
	t.Helper()
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	r.Decode(t, &env)
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("decode %s: %v", env.Data, err)
	}
}

// TestBotCredentialsReplacedWhileSending: new credentials given to a bot
// while sends run lose no job and fail none; each send goes out with the
// old token or the new one, and a second after the change every node sends
// with the new one.
func TestBotCredentialsReplacedWhileSending(t *testing.T) {
	db := t.TempDir() + "/bots.db"
	h := testkit.New(t, testkit.WithDB(db), testkit.WithWorkers(8))
	other := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(h.Telegram), testkit.WithWorkers(2))
	f := h.Seed(t)
	token2 := h.Telegram.NewBot()
	send := func(node *testkit.Herald, i int) string {
		r := node.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": fmt.Sprint(f.Target.ID), "content": fmt.Sprint("m", i)},
			"Idempotency-Key", fmt.Sprint("swap-", i))
		if r.Status != http.StatusOK {
			t.Errorf("send %d: %d %s", i, r.Status, r.Body)
		}
		return fmt.Sprint("m", i)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			send(h, i)
		}()
	}
	// The change comes while sends are under way: some went out before.
	for len(h.Telegram.Messages()) < 10 {
		time.Sleep(2 * time.Millisecond)
	}
	cfg := map[string]any{"token": token2, "api_base": h.Telegram.URL()}
	if r := h.Call(t, "PATCH", fmt.Sprint("/manage/v1/bots/", f.Bot.ID), f.Key, map[string]any{"config": cfg, "verify": false}); r.Status != http.StatusOK {
		t.Fatalf("replace the credentials: %d %s", r.Status, r.Body)
	}
	wg.Wait()
	// A second after the change every node uses the new credentials
	// (the worker of a send may be on either node).
	time.Sleep(1100 * time.Millisecond)
	send(h, 100)
	send(other, 101)
	byText := map[string]string{}
	for _, m := range h.Telegram.Messages() {
		if _, dup := byText[m.Text]; dup {
			t.Errorf("%s delivered twice", m.Text)
		}
		byText[m.Text] = m.Token
	}
	tokens := map[string]int{}
	for i := range 40 {
		tok, ok := byText[fmt.Sprint("m", i)]
		if !ok {
			t.Errorf("m%d was not delivered", i)
		}
		tokens[tok]++
	}
	if len(tokens) != 2 {
		t.Errorf("the 40 sends went out with %d tokens, want both the old and the new", len(tokens))
	}
	for _, text := range []string{"m100", "m101"} {
		if byText[text] != token2 {
			t.Errorf("%s, sent after the change, went out with the old token", text)
		}
	}
	// No job failed for the swap.
	jobs, err := h.Engine.Jobs().List(context.Background(), push.System(), push.JobFilter{AccountID: f.Account.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.State != push.StateSucceeded {
			t.Errorf("job %s %s: %s", j.ID, j.State, j.Error)
		}
	}
}

// TestDeleteAndUnbindCancelQueuedJobs: deleting a bot or unbinding a
// target cancels its queued jobs and returns their points once; its
// finished jobs keep their history; later sends to it are 404; a target
// bound again keeps its id.
func TestDeleteAndUnbindCancelQueuedJobs(t *testing.T) {
	for _, what := range []string{"bot", "target"} {
		t.Run(what, func(t *testing.T) {
			h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
				testkit.WithLimits(push.Limits{SyncWait: 5 * time.Millisecond}))
			f := h.Seed(t)
			ctx := context.Background()
			p := push.AccountPrincipal(f.Account.ID)
			other := h.Target(t, f.Bot.ID, push.TargetUser, "")
			var queued []string
			for i := range 5 {
				res, err := h.Engine.Send(ctx, p, push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: push.Message{Content: fmt.Sprint(i)}})
				if err != nil {
					t.Fatal(err)
				}
				queued = append(queued, res.Jobs[0].ID)
			}
			res, err := h.Engine.Send(ctx, p, push.SendRequest{BotID: f.Bot.ID, TargetID: other.ID, Message: push.Message{Content: "other"}})
			if err != nil {
				t.Fatal(err)
			}
			otherJob := res.Jobs[0].ID
			if b := h.Balance(t, f.Account.ID); b != 94 {
				t.Fatalf("balance %d after 6 sends, want 94", b)
			}
			path := fmt.Sprint("/manage/v1/bots/", f.Bot.ID)
			if what == "target" {
				path = fmt.Sprint("/manage/v1/targets/", f.Target.ID)
			}
			r := h.Call(t, "DELETE", path, f.Key, nil)
			var c struct{ Canceled int }
			dataOf(t, r, &c)
			if r.Status != http.StatusOK || c.Canceled != map[string]int{"bot": 6, "target": 5}[what] {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			for _, id := range queued {
				j, err := h.Engine.Jobs().Get(ctx, p, id)
				if err != nil || j.State != push.StateCanceled || !strings.Contains(j.Error, "points returned") {
					t.Fatalf("job %s: %+v, %v", id, j.State, err)
				}
			}
			j, _ := h.Engine.Jobs().Get(ctx, p, otherJob)
			wantOther := map[string]push.State{"bot": push.StateCanceled, "target": push.StateQueued}[what]
			if j.State != wantOther {
				t.Fatalf("the other target's job is %s, want %s", j.State, wantOther)
			}
			wantBalance := map[string]int64{"bot": 100, "target": 99}[what]
			if b := h.Balance(t, f.Account.ID); b != wantBalance {
				t.Fatalf("balance %d, want %d", b, wantBalance)
			}
			// Again: nothing more to cancel or return.
			if r := h.Call(t, "DELETE", path, f.Key, nil); r.Status != http.StatusNotFound {
				t.Fatalf("a second delete: %d %s", r.Status, r.Body)
			}
			if b := h.Balance(t, f.Account.ID); b != wantBalance {
				t.Fatalf("balance %d after a second delete", b)
			}
			// Later sends are 404, as to something that does not exist.
			s := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": fmt.Sprint(f.Target.ID), "content": "late"})
			wantReason := map[string]string{"bot": "bot_not_found", "target": "target_not_found"}[what]
			if e := errorOf(t, s); s.Status != http.StatusNotFound || e.Error != wantReason {
				t.Fatalf("a send after the %s went: %d %s", what, s.Status, s.Body)
			}
			// The canceled jobs keep their history and show in the list.
			jobs := h.Call(t, "GET", "/manage/v1/jobs?state=canceled", f.Key, nil)
			var page struct{ Items []map[string]any }
			dataOf(t, jobs, &page)
			if jobs.Status != http.StatusOK || len(page.Items) != c.Canceled {
				t.Fatalf("canceled jobs listed: %d %s", jobs.Status, jobs.Body)
			}
			if what == "target" {
				// Bound again: the same id, and sends work again.
				again := h.Target(t, f.Bot.ID, push.TargetUser, f.Target.Address)
				if again.ID != f.Target.ID {
					t.Fatalf("bound again as target %d, want %d", again.ID, f.Target.ID)
				}
			}
		})
	}
}

// TestJobListing: jobs are listed newest first with each filter, and the
// pages read with the cursor neither skip nor repeat a job while new jobs
// are made between the pages.
func TestJobListing(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: 5 * time.Millisecond, BacklogPerBot: 1000}))
	f := h.Seed(t)
	ctx := context.Background()
	p := push.AccountPrincipal(f.Account.ID)
	second := h.Target(t, f.Bot.ID, push.TargetUser, "")
	var first []string // the first 30 jobs, oldest first
	for i := range 30 {
		tg := f.Target.ID
		if i%3 == 0 {
			tg = second.ID
		}
		res, err := h.Engine.Send(ctx, p, push.SendRequest{BotID: f.Bot.ID, TargetID: tg, Message: push.Message{Content: fmt.Sprint(i)},
			IdempotencyKey: fmt.Sprint("k", i)})
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, res.Jobs[0].ID)
	}
	list := func(query string) ([]string, string) {
		t.Helper()
		r := h.Call(t, "GET", "/manage/v1/jobs?"+query, f.Key, nil)
		var page struct {
			Items []struct{ JobID string }
			Next  string
		}
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		dataOf(t, r, &page)
		ids := make([]string, len(page.Items))
		for i, it := range page.Items {
			ids[i] = it.JobID
		}
		return ids, page.Next
	}
	// Pages of 7 while a job is made before each page: together they are
	// the first 30 jobs, newest first, each once.
	var got []string
	cursor := ""
	for n := 0; ; n++ {
		ids, next := list("limit=7&cursor=" + cursor)
		got = append(got, ids...)
		if _, err := h.Engine.Send(ctx, p, push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: push.Message{Content: fmt.Sprint("new ", n)}}); err != nil {
			t.Fatal(err)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	want := make([]string, len(first))
	for i, id := range first {
		want[len(first)-1-i] = id
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the pages hold %d jobs:\n%v\nwant the first 30, newest first:\n%v", len(got), got, want)
	}
	// The filters.
	if ids, _ := list(fmt.Sprint("target=", second.ID, "&limit=100")); len(ids) != 10 {
		t.Errorf("target filter: %d jobs, want 10", len(ids))
	}
	if ids, _ := list("key=k7"); len(ids) != 1 || ids[0] != first[7] {
		t.Errorf("key filter: %v, want %s", ids, first[7])
	}
	if _, err := h.Engine.Jobs().Cancel(ctx, p, first[3]); err != nil {
		t.Fatal(err)
	}
	if ids, _ := list("state=canceled"); len(ids) != 1 || ids[0] != first[3] {
		t.Errorf("state filter: %v", ids)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if ids, _ := list("since=" + future); len(ids) != 0 {
		t.Errorf("since the future: %v", ids)
	}
	if ids, _ := list("until=" + future + "&limit=500"); len(ids) != 30+5 {
		t.Errorf("until the future: %d jobs", len(ids))
	}
	// Bad filters are 400 with the reason.
	for _, q := range []string{"state=lost", "limit=501", "limit=x", "cursor=abc", "since=yesterday", "bot=-1", "key=has%20space"} {
		r := h.Call(t, "GET", "/manage/v1/jobs?"+q, f.Key, nil)
		if r.Status != http.StatusBadRequest || errorOf(t, r).Message == "" {
			t.Errorf("%s: %d %s, want 400 with a message", q, r.Status, r.Body)
		}
	}
}

// TestManageRefusesBadInput: every malformed management request is a 400
// (or 409, 413) whose message says what is wrong, and changes nothing.
func TestManageRefusesBadInput(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.SQLite))
	f := h.Seed(t)
	ops := h.Account(t, "ops")
	h.User(t, ops.ID, "ops@example.com", push.RoleOperator)
	h.User(t, f.Account.ID, "ada@example.com", push.RoleMember)
	op := testkit.Cookie(h.SignIn(t, "ops@example.com"))
	long := strings.Repeat("n", 201)
	pw := testkit.Password
	tests := []struct {
		name, method, path string
		body               any
		status             int
		reason             string
	}{
		{"empty body", "POST", "/manage/v1/keys", "", 400, "empty_body"},
		{"not an object", "POST", "/manage/v1/keys", "[1]", 400, "invalid_json"},
		{"unknown field", "POST", "/manage/v1/keys", map[string]any{"nmae": "x"}, 400, "unknown_field"},
		{"wrong type", "POST", "/manage/v1/keys", `{"name": 5}`, 400, "invalid_json"},
		{"key name too long", "POST", "/manage/v1/keys", map[string]any{"name": long}, 400, "invalid_name"},
		{"key expiry past", "POST", "/manage/v1/keys", map[string]any{"expiresAt": "2020-01-01T00:00:00Z"}, 400, "invalid_expiry"},
		{"key role unknown", "POST", "/manage/v1/keys", map[string]any{"role": "god"}, 400, "invalid_role"},
		{"user without email", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "password": pw}, 400, "invalid_email"},
		{"user bad email", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "email": "ada at example", "password": pw}, 400, "invalid_email"},
		{"weak password: short", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "email": "g@example.com", "password": "short"}, 400, "weak_password"},
		{"weak password: common", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "email": "g@example.com", "password": "password123"}, 400, "weak_password"},
		{"weak password: the email", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "email": "grace.hopper@example.com", "password": "grace.hopper@example.com"}, 400, "weak_password"},
		{"weak password: repeated", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "email": "g@example.com", "password": strings.Repeat("a", 12)}, 400, "weak_password"},
		{"duplicate email", "POST", "/manage/v1/users", map[string]any{"accountId": f.Account.ID, "email": "ADA@example.com", "password": pw}, 409, "email_taken"},
		{"user in no account", "POST", "/manage/v1/users", map[string]any{"accountId": 999, "email": "g@example.com", "password": pw}, 404, "account_not_found"},
		{"bot without platform", "POST", "/manage/v1/bots", map[string]any{"name": "x", "config": map[string]any{}}, 400, "unknown_platform"},
		{"bot bad config", "POST", "/manage/v1/bots", map[string]any{"platform": "telegram", "name": "x", "config": map[string]any{"token": "bad"}, "verify": false}, 400, "invalid_config"},
		{"bot name too long", "POST", "/manage/v1/bots", map[string]any{"platform": "ntfy", "name": long, "config": map[string]any{"server": "https://ntfy.example.com", "topic": "t"}, "verify": false}, 400, "invalid_name"},
		{"bot update nothing", "PATCH", fmt.Sprint("/manage/v1/bots/", f.Bot.ID), map[string]any{}, 400, "nothing_to_change"},
		{"bot bad id", "GET", "/manage/v1/bots/abc", nil, 400, "invalid_id"},
		{"target bad type", "POST", fmt.Sprint("/manage/v1/bots/", f.Bot.ID, "/targets"), map[string]any{"type": "channel", "address": "1"}, 400, "invalid_target_type"},
		{"target twice", "POST", fmt.Sprint("/manage/v1/bots/", f.Bot.ID, "/targets"), map[string]any{"type": "user", "address": f.Target.Address}, 409, "target_exists"},
		{"resolve bad outcome", "POST", "/manage/v1/jobs/0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10/resolve", map[string]any{"outcome": "queued"}, 400, "invalid_outcome"},
		{"grant without reason", "POST", "/manage/v1/ledger", map[string]any{"accountId": f.Account.ID, "amount": 5}, 400, "invalid_reason"},
		{"grant of zero", "POST", "/manage/v1/ledger", map[string]any{"accountId": f.Account.ID, "amount": 0, "reason": "x"}, 400, "invalid_amount"},
		{"deduct below zero", "POST", "/manage/v1/ledger", map[string]any{"accountId": f.Account.ID, "amount": -101, "reason": "x"}, 400, "insufficient_points"},
		{"account status unknown", "PATCH", fmt.Sprint("/manage/v1/accounts/", f.Account.ID), map[string]any{"status": "gone"}, 400, "invalid_status"},
		{"account name empty", "POST", "/manage/v1/accounts", map[string]any{"name": " "}, 400, "invalid_name"},
		{"invite both", "POST", "/manage/v1/invites", map[string]any{"accountId": f.Account.ID, "newAccount": true}, 400, "invalid_invite"},
		{"sign-up closed", "POST", "/manage/v1/signup", map[string]any{"email": "x@example.com", "password": pw}, 403, "signup_closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, h)
			r := h.Call(t, tt.method, tt.path, "", tt.body, op...)
			e := errorOf(t, r)
			if r.Status != tt.status || e.Error != tt.reason || len(e.Message) < 15 {
				t.Fatalf("%d %s, want %d %s with a message", r.Status, r.Body, tt.status, tt.reason)
			}
			after := snapshot(t, h)
			// A sign-in or a request may touch nothing but the audit
			// trail of successes: a refusal writes nothing at all.
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Fatalf("a refused request changed the database")
			}
		})
	}
}
