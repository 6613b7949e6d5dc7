package fake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Telegram fake's updates: what users do (write to a bot, block it,
// add it to a group…) becomes an update in the bot's queue, which the bot
// reads with getUpdates (a long poll, confirmed by the next offset) or
// which the fake pushes to the bot's webhook with its secret_token header,
// as the real Bot API does. getUpdates is refused with 409 while a
// webhook is set, and an earlier poll is ended with 409 by a later one.

// TelegramChat is a chat as users' actions name it.
type TelegramChat struct {
	ID    int64
	Type  string // private, group or supergroup
	Title string // a group's
	Name  string // a private chat's user
}

// tgUpdate is one update in a bot's queue.
type tgUpdate struct {
	ID   int64
	Body map[string]any
}

// tgBotState is one bot's updates and how it receives them.
type tgBotState struct {
	queue      []tgUpdate
	next       int64
	webhook    string
	secret     string
	pollSeq    int           // the current poll; an earlier one ends with 409
	wake       chan struct{} // closed when updates arrive
	pushed     int           // updates pushed to the webhook and answered 2xx
	webhookLog []int         // the statuses the webhook answered
}

func (f *Telegram) botState(token string) *tgBotState {
	if f.bots == nil {
		f.bots = make(map[string]*tgBotState)
	}
	s := f.bots[token]
	if s == nil {
		s = &tgBotState{next: 100000, wake: make(chan struct{})}
		f.bots[token] = s
	}
	return s
}

// Write makes a user write text to the bot in chat, as Telegram delivers
// it: a message update. The chat becomes known (the bot may send to it).
func (f *Telegram) Write(token string, chat TelegramChat, text string) {
	f.AddChat(strconv.FormatInt(chat.ID, 10))
	msg := map[string]any{"message_id": f.nextMessageID(chat.ID), "date": time.Now().Unix(), "chat": tgChat(chat), "text": text,
		"from": map[string]any{"id": chat.ID, "is_bot": false, "first_name": chat.Name}}
	f.enqueue(token, map[string]any{"message": msg})
}

// BlockBot makes the user of a private chat block the bot (or, with unblock,
// unblock it): a my_chat_member update, and sends to the chat answer 403
// while it is blocked.
func (f *Telegram) BlockBot(token string, chat TelegramChat, block bool) {
	id := strconv.FormatInt(chat.ID, 10)
	f.mu.Lock()
	f.blocked[id] = block
	f.mu.Unlock()
	old, status := "member", "kicked"
	if !block {
		old, status = "kicked", "member"
	}
	f.enqueue(token, map[string]any{"my_chat_member": tgMember(chat, old, status)})
}

// Membership makes a group add the bot (member) or remove it (left).
func (f *Telegram) Membership(token string, chat TelegramChat, status string) {
	old := "left"
	if status == "left" || status == "kicked" {
		old = "member"
	} else {
		f.AddChat(strconv.FormatInt(chat.ID, 10))
	}
	f.enqueue(token, map[string]any{"my_chat_member": tgMember(chat, old, status)})
}

// Upgrade makes a group become a supergroup: the migrate_to_chat_id
// message, and sends to the old id fail with it.
func (f *Telegram) Upgrade(token string, chat TelegramChat, to int64) {
	f.MigrateChat(strconv.FormatInt(chat.ID, 10), to)
	msg := map[string]any{"message_id": f.nextMessageID(chat.ID), "date": time.Now().Unix(), "chat": tgChat(chat), "migrate_to_chat_id": to}
	f.enqueue(token, map[string]any{"message": msg})
}

// Pending returns how many updates wait in a bot's queue.
func (f *Telegram) Pending(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.botState(token).queue)
}

// Webhook returns the webhook URL set for a bot ("" for none).
func (f *Telegram) Webhook(token string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.botState(token).webhook
}

// WebhookAnswers returns the HTTP statuses the bot's webhook answered the
// fake's pushes with.
func (f *Telegram) WebhookAnswers(token string) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.botState(token).webhookLog...)
}

func tgChat(c TelegramChat) map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type}
	if c.Title != "" {
		m["title"] = c.Title
	}
	if c.Name != "" {
		m["first_name"] = c.Name
	}
	return m
}

func tgMember(c TelegramChat, old, status string) map[string]any {
	return map[string]any{"chat": tgChat(c), "date": time.Now().Unix(), "from": map[string]any{"id": c.ID, "is_bot": false},
		"old_chat_member": map[string]any{"status": old, "user": map[string]any{"id": 1, "is_bot": true}},
		"new_chat_member": map[string]any{"status": status, "user": map[string]any{"id": 1, "is_bot": true}}}
}

func (f *Telegram) nextMessageID(chat int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := "in:" + strconv.FormatInt(chat, 10)
	f.nextID[k]++
	return 1000 + f.nextID[k]
}

// enqueue adds an update to a bot's queue, and pushes it at once when the
// bot has a webhook.
func (f *Telegram) enqueue(token string, body map[string]any) {
	f.mu.Lock()
	s := f.botState(token)
	s.next++
	body["update_id"] = s.next
	s.queue = append(s.queue, tgUpdate{ID: s.next, Body: body})
	close(s.wake)
	s.wake = make(chan struct{})
	hook := s.webhook != ""
	f.mu.Unlock()
	if hook {
		f.push(token)
	}
}

// push delivers a bot's queue to its webhook, one update per request, in
// order, as Telegram does; an update the webhook does not answer 2xx
// stays queued for the next push.
func (f *Telegram) push(token string) {
	for {
		f.mu.Lock()
		s := f.botState(token)
		if s.webhook == "" || len(s.queue) == 0 {
			f.mu.Unlock()
			return
		}
		u, url, secret := s.queue[0], s.webhook, s.secret
		f.mu.Unlock()
		body, _ := json.Marshal(u.Body)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		status := 0
		var answer map[string]any
		if err == nil {
			status = resp.StatusCode
			_ = json.NewDecoder(resp.Body).Decode(&answer)
			resp.Body.Close()
		}
		f.mu.Lock()
		s.webhookLog = append(s.webhookLog, status)
		ok := status >= 200 && status < 300
		if ok && len(s.queue) > 0 && s.queue[0].ID == u.ID {
			s.queue = s.queue[1:]
			s.pushed++
		}
		f.mu.Unlock()
		if !ok {
			return
		}
		// A 2xx answer may carry a Bot API call, which Telegram executes.
		if m, _ := answer["method"].(string); m == "sendMessage" {
			chat := jsonString(answer["chat_id"])
			text, _ := answer["text"].(string)
			f.record(token, chat, text)
		}
	}
}

// record accepts a message the bot sent from a webhook answer.
func (f *Telegram) record(token, chat, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID[chat]++
	f.messages = append(f.messages, TelegramMessage{Token: token, Method: "sendMessage", ChatID: chat, Text: text, MessageID: f.nextID[chat], At: time.Now()})
}

func jsonString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatInt(int64(v), 10)
	}
	return ""
}

// getUpdates answers a long poll: the bot's updates from offset on (those
// before it are confirmed and dropped), waiting up to timeout seconds for
// one; 409 while a webhook is set, and for a poll a later one replaced.
func (f *Telegram) getUpdates(w http.ResponseWriter, r *http.Request, token string, p map[string]string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	timeout = min(max(timeout, 0), 50)
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	allowed := map[string]bool{}
	if a := p["allowed_updates"]; a != "" {
		var list []string
		_ = json.Unmarshal([]byte(a), &list)
		for _, k := range list {
			allowed[k] = true
		}
	}
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	f.mu.Lock()
	s := f.botState(token)
	if s.webhook != "" {
		f.mu.Unlock()
		tgError(w, http.StatusConflict, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
		return
	}
	s.pollSeq++
	mine := s.pollSeq
	for {
		kept := s.queue[:0]
		for _, u := range s.queue {
			if u.ID >= offset {
				kept = append(kept, u)
			}
		}
		s.queue = kept
		var out []map[string]any
		for _, u := range s.queue {
			if len(out) == limit {
				break
			}
			if len(allowed) == 0 || allowedUpdate(u.Body, allowed) {
				out = append(out, u.Body)
			}
		}
		if len(out) > 0 || timeout == 0 {
			f.mu.Unlock()
			tgWrite(w, http.StatusOK, tgAnswer{OK: true, Result: orEmpty(out)})
			return
		}
		wake := s.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			tgWrite(w, http.StatusOK, tgAnswer{OK: true, Result: []map[string]any{}})
			return
		case <-r.Context().Done():
			return
		}
		f.mu.Lock()
		if s.pollSeq != mine {
			f.mu.Unlock()
			tgError(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
			return
		}
	}
}

func orEmpty(out []map[string]any) []map[string]any {
	if out == nil {
		return []map[string]any{}
	}
	return out
}

func allowedUpdate(body map[string]any, allowed map[string]bool) bool {
	for k := range body {
		if k != "update_id" && allowed[k] {
			return true
		}
	}
	return false
}

// setWebhook sets (or, with an empty url, removes) a bot's webhook; like
// Telegram, it needs an HTTPS URL on port 443, 80, 88 or 8443 — except
// that the fake also takes http://127.0.0.1 (the tests' servers).
func (f *Telegram) setWebhook(w http.ResponseWriter, token string, p map[string]string) {
	url := p["url"]
	secret := p["secret_token"]
	if url != "" && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://127.0.0.1") {
		tgError(w, http.StatusBadRequest, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
		return
	}
	for _, c := range secret {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') || len(secret) > 256 {
			tgError(w, http.StatusBadRequest, "Bad Request: secret token contains unallowed characters")
			return
		}
	}
	f.mu.Lock()
	s := f.botState(token)
	s.webhook, s.secret = url, secret
	if p["drop_pending_updates"] == "true" {
		s.queue = nil
	}
	close(s.wake) // a poll under way ends with 409
	s.wake = make(chan struct{})
	s.pollSeq++
	f.mu.Unlock()
	desc := "Webhook was set"
	if url == "" {
		desc = "Webhook was deleted"
	}
	tgWrite(w, http.StatusOK, tgAnswer{OK: true, Result: true, Description: desc})
	if url != "" {
		go f.push(token)
	}
}

// WebhookSecret returns the secret_token the bot's webhook was set with.
func (f *Telegram) WebhookSecret(token string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.botState(token).secret
}
