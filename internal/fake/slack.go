package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// Slack is a fake server for Slack-compatible incoming webhooks on
// loopback, serving three flavors as the real services do:
//
//   - Slack (POST /services/T…/B…/…): a JSON or payload= form body that
//     needs text or blocks (400 no_text), blocks checked like Slack's
//     (section text 1-3000 characters, image blocks with an http(s)
//     image_url and an alt_text of 1-2000, at most 50 blocks; else 400
//     invalid_blocks), 403 invalid_token for a wrong key, 404 no_service
//     for an unknown hook, 410 channel_is_archived; answers "ok".
//   - Mattermost (POST /hooks/<id>): text or attachments required (400
//     with Mattermost's app error JSON), 400 "Invalid webhook." for an
//     unknown id; answers "ok".
//   - Rocket.Chat (POST /hooks/<id>/<token>): 404 {"success":false} for
//     an unknown integration or token; answers {"success":true}.
type Slack struct {
	simpleServer

	hooks    map[string]*slackHook // by path
	messages []SlackMessage
}

type slackHook struct {
	flavor   string
	archived bool
}

// SlackMessage is one message a webhook posted.
type SlackMessage struct {
	Flavor      string
	Path        string
	Text        string
	Mrkdwn      *bool
	Blocks      []map[string]any
	Attachments []map[string]any
}

// NewSlack starts a fake webhook server, closed when the test ends.
func NewSlack(tb testing.TB) *Slack {
	f := &Slack{hooks: make(map[string]*slackHook)}
	f.start(tb, f.serve)
	return f
}

// NewHook creates an incoming webhook of the flavor ("slack",
// "mattermost" or "rocketchat") and returns its URL.
func (f *Slack) NewHook(flavor string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var path string
	switch flavor {
	case "mattermost":
		path = "/hooks/" + strings.ToLower(randomAlnum(26))
	case "rocketchat":
		path = "/hooks/" + randomAlnum(17) + "/" + randomAlnum(48)
	default:
		path = fmt.Sprintf("/services/T%s/B%s/%s", strings.ToUpper(randomAlnum(8)), strings.ToUpper(randomAlnum(10)), randomAlnum(24))
	}
	f.hooks[path] = &slackHook{flavor: flavor}
	return f.URL() + path
}

// Archive archives the channel of a Slack webhook.
func (f *Slack) Archive(hookURL string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hooks[strings.TrimPrefix(hookURL, f.URL())]; h != nil {
		h.archived = true
	}
}

// Messages returns the messages posted so far.
func (f *Slack) Messages() []SlackMessage { return snapshot(&f.mu, &f.messages) }

// SlackFault is Slack's plain-text error answer, e.g. SlackFault(429,
// "rate_limited", 1) with a Retry-After of one second.
func SlackFault(status int, code string, retryAfter int) Fault {
	h := http.Header{"Content-Type": {"text/plain"}}
	if retryAfter > 0 {
		h.Set("Retry-After", fmt.Sprint(retryAfter))
	}
	return Fault{Status: status, Header: h, Body: code}
}

func slackText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func mattermostError(w http.ResponseWriter, id, msg string) {
	writeJSONAnswer(w, http.StatusBadRequest, map[string]any{"id": id, "message": msg, "detailed_error": "", "request_id": strings.ToLower(randomAlnum(26)), "status_code": 400})
}

// lookup finds the hook of a request path; for Slack it tells a wrong key
// (the team and bot ids match) from an unknown hook.
func (f *Slack) lookup(path string) (*slackHook, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hooks[path]; h != nil {
		return h, h.flavor
	}
	switch {
	case strings.HasPrefix(path, "/services/"):
		prefix := path[:strings.LastIndexByte(path, '/')+1]
		for p, h := range f.hooks {
			if h.flavor == "slack" && strings.HasPrefix(p, prefix) {
				return nil, "slack-bad-key"
			}
		}
		return nil, "slack"
	case strings.Count(path, "/") == 3:
		return nil, "rocketchat"
	}
	return nil, "mattermost"
}

func (f *Slack) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	hook, flavor := f.lookup(r.URL.Path)
	var in struct {
		Text        *string          `json:"text"`
		Mrkdwn      *bool            `json:"mrkdwn"`
		Blocks      []map[string]any `json:"blocks"`
		Attachments []map[string]any `json:"attachments"`
	}
	raw := body
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		r.Body = nopBody(body)
		_ = r.ParseForm()
		raw = []byte(r.PostForm.Get("payload"))
	}
	parseErr := json.Unmarshal(raw, &in)
	text := ""
	if in.Text != nil {
		text = *in.Text
	}
	switch flavor {
	case "slack-bad-key":
		slackText(w, http.StatusForbidden, "invalid_token")
		return
	case "slack":
		switch {
		case hook == nil:
			slackText(w, http.StatusNotFound, "no_service")
			return
		case hook.archived:
			slackText(w, http.StatusGone, "channel_is_archived")
			return
		case parseErr != nil:
			slackText(w, http.StatusBadRequest, "invalid_payload")
			return
		case strings.TrimSpace(text) == "" && len(in.Blocks) == 0 && len(in.Attachments) == 0:
			slackText(w, http.StatusBadRequest, "no_text")
			return
		case !slackBlocksValid(in.Blocks):
			slackText(w, http.StatusBadRequest, "invalid_blocks")
			return
		}
	case "mattermost":
		switch {
		case hook == nil:
			mattermostError(w, "web.incoming_webhook.invalid.app_error", "Invalid webhook.")
			return
		case parseErr != nil:
			mattermostError(w, "api.webhook.incoming.error", "Unable to parse the incoming data.")
			return
		case strings.TrimSpace(text) == "" && len(in.Attachments) == 0:
			mattermostError(w, "web.incoming_webhook.text.app_error", "No text specified.")
			return
		}
	case "rocketchat":
		switch {
		case hook == nil:
			writeJSONAnswer(w, http.StatusNotFound, map[string]any{"success": false, "error": "Invalid integration id or token provided."})
			return
		case parseErr != nil:
			writeJSONAnswer(w, http.StatusBadRequest, map[string]any{"success": false, "error": "Invalid JSON payload"})
			return
		case strings.TrimSpace(text) == "" && len(in.Attachments) == 0:
			writeJSONAnswer(w, http.StatusBadRequest, map[string]any{"success": false, "error": "error-invalid-message"})
			return
		}
	}
	m := SlackMessage{Flavor: flavor, Path: r.URL.Path, Text: text, Mrkdwn: in.Mrkdwn, Blocks: in.Blocks, Attachments: in.Attachments}
	f.mu.Lock()
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	if flavor == "rocketchat" {
		writeJSONAnswer(w, http.StatusOK, map[string]any{"success": true})
		return
	}
	slackText(w, http.StatusOK, "ok")
}

// slackBlocksValid checks section and image blocks as Slack does.
func slackBlocksValid(blocks []map[string]any) bool {
	if len(blocks) > 50 {
		return false
	}
	for _, b := range blocks {
		switch b["type"] {
		case "section":
			t, _ := b["text"].(map[string]any)
			s, _ := t["text"].(string)
			if tt := t["type"]; (tt != "mrkdwn" && tt != "plain_text") || s == "" || utf8.RuneCountInString(s) > 3000 {
				return false
			}
		case "image":
			u, _ := b["image_url"].(string)
			alt, _ := b["alt_text"].(string)
			if !(strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) || len(u) > 3000 || alt == "" || utf8.RuneCountInString(alt) > 2000 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
