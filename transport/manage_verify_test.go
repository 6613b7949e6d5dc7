package transport_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
)

// TestBotVerify: credentials given with verify (the default) are checked
// with the platform before anything is saved. Telegram refusing the token
// is a 400 that names the refusal and not the token, and the bot keeps
// sending with its old token; a Bot API that cannot answer is a 503 that
// changes nothing either; a token Telegram knows is saved and reported verified.
func TestBotVerify(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	var saved struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(f.Bot.Config, &saved); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprint("/manage/v1/bots/", f.Bot.ID)
	wrongSecret := strings.Repeat("q", 35)
	wrong := map[string]any{"token": "7000000999:" + wrongSecret, "api_base": h.Telegram.URL()}
	// sendsWith sends text and returns the token the fake saw it with.
	sendsWith := func(t *testing.T, text string) string {
		t.Helper()
		r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": fmt.Sprint(f.Target.ID), "content": text})
		if r.Status != http.StatusOK {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		for _, m := range h.Telegram.Messages() {
			if m.Text == text {
				return m.Token
			}
		}
		t.Fatalf("Telegram received no %q", text)
		return ""
	}
	bots := func(t *testing.T) int {
		t.Helper()
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		dataOf(t, h.Call(t, "GET", fmt.Sprint("/manage/v1/bots?accountId=", f.Account.ID), f.Key, nil), &page)
		return len(page.Items)
	}

	refusals := []struct {
		name, method, path string
		body               map[string]any
		fault              *fake.TelegramFault
		status             int
		reason             string
	}{
		{"update with a wrong token", "PATCH", path, map[string]any{"config": wrong}, nil, 400, "credentials_refused"},
		{"update with a wrong token, verify true", "PATCH", path, map[string]any{"config": wrong, "verify": true}, nil, 400, "credentials_refused"},
		{"create with a wrong token", "POST", "/manage/v1/bots", map[string]any{"platform": "telegram", "name": "second", "config": wrong}, nil, 400, "credentials_refused"},
		{"update while the Bot API fails", "PATCH", path, map[string]any{"config": map[string]any{"token": h.Telegram.NewBot(), "api_base": h.Telegram.URL()}},
			&fake.TelegramFault{Status: 502, Description: "Bad Gateway"}, 503, "platform_unreachable"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			before := bots(t)
			if c.fault != nil {
				h.Telegram.Fail(*c.fault)
			}
			r := h.Call(t, c.method, c.path, f.Key, c.body)
			if r.Status != c.status || r.JSON()["error"] != c.reason {
				t.Fatalf("%d %s; want %d %s", r.Status, r.Body, c.status, c.reason)
			}
			msg, _ := r.JSON()["message"].(string)
			if c.reason == "credentials_refused" && !strings.Contains(msg, "Telegram refused the bot token") {
				t.Errorf("message %q does not say Telegram refused the token", msg)
			}
			if strings.Contains(string(r.Body), wrongSecret) || strings.Contains(string(r.Body), saved.Token) {
				t.Errorf("the answer quotes a token: %s", r.Body)
			}
			if n := bots(t); n != before {
				t.Errorf("%d bots after the refusal, %d before", n, before)
			}
			if tok := sendsWith(t, "after "+c.name); tok != saved.Token {
				t.Error("the bot no longer sends with its old token")
			}
		})
	}

	t.Run("verify the saved token", func(t *testing.T) {
		var v struct {
			Verified bool `json:"verified"`
		}
		dataOf(t, h.Call(t, "POST", path+"/verify", f.Key, nil), &v)
		if !v.Verified {
			t.Fatal("the saved token did not verify")
		}
	})

	t.Run("update with a good token", func(t *testing.T) {
		good := h.Telegram.NewBot()
		r := h.Call(t, "PATCH", path, f.Key, map[string]any{"config": map[string]any{"token": good, "api_base": h.Telegram.URL()}})
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		var v struct {
			Verified bool `json:"verified"`
		}
		dataOf(t, r, &v)
		if !v.Verified {
			t.Errorf("answer %s: not verified", r.Body)
		}
		if strings.Contains(string(r.Body), strings.Split(good, ":")[1]) {
			t.Errorf("the answer quotes the token: %s", r.Body)
		}
		if tok := sendsWith(t, "after the good token"); tok != good {
			t.Error("the bot does not send with its new token")
		}
	})
}

// TestBotVerifyNtfy: an ntfy bot is verified when it has credentials
// (verified true, or 400 for a token ntfy does not know, saving nothing),
// and is saved unverified, not refused, when it has none.
func TestBotVerifyNtfy(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	n := fake.NewNtfy(t)
	good := n.AddUser("ada", "pw-ada-secret", "alerts")
	wrong := "tk_" + strings.Repeat("w", 29)
	cases := []struct {
		name     string
		token    string
		status   int
		reason   string
		verified bool
	}{
		{"known token", good, 201, "", true},
		{"unknown token", wrong, 400, "credentials_refused", false},
		{"no credentials", "", 201, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := map[string]any{"server": n.URL(), "topic": "alerts"}
			if c.token != "" {
				cfg["token"] = c.token
			}
			r := h.Call(t, "POST", "/manage/v1/bots", f.Key, map[string]any{"platform": "ntfy", "name": "relay " + c.name, "config": cfg})
			if r.Status != c.status {
				t.Fatalf("%d %s; want %d", r.Status, r.Body, c.status)
			}
			if c.token != "" && strings.Contains(string(r.Body), c.token) {
				t.Errorf("the answer quotes the token: %s", r.Body)
			}
			if c.reason != "" {
				if r.JSON()["error"] != c.reason {
					t.Errorf("reason %v, want %s", r.JSON()["error"], c.reason)
				}
				var page struct {
					Items []struct {
						Name string `json:"name"`
					} `json:"items"`
				}
				dataOf(t, h.Call(t, "GET", fmt.Sprint("/manage/v1/bots?accountId=", f.Account.ID), f.Key, nil), &page)
				for _, b := range page.Items {
					if b.Name == "relay "+c.name {
						t.Error("the refused bot was saved")
					}
				}
				return
			}
			var v struct {
				Verified bool `json:"verified"`
			}
			dataOf(t, r, &v)
			if v.Verified != c.verified {
				t.Errorf("verified %v, want %v", v.Verified, c.verified)
			}
		})
	}
	if len(n.Messages()) != 0 {
		t.Error("verifying published a message")
	}
}
