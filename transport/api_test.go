package transport_test

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// record is the single-send answer's data.
type record struct {
	ID            int64  `json:"id"`
	Bot           int64  `json:"bot"`
	User          int64  `json:"user"`
	Content       string `json:"content"`
	MsgType       int    `json:"msg_type"`
	Status        string `json:"status"`
	PlatformIndex string `json:"platformIndex"`
	JobID         string `json:"jobId"`
	Pending       bool   `json:"pending"`
	Uncertain     bool   `json:"uncertain"`
	Error         string `json:"error,omitempty"`
}

type singleAnswer struct {
	Code    int     `json:"code"`
	Message string  `json:"message"`
	Error   string  `json:"error,omitempty"`
	Data    *record `json:"data"`
}

type errAnswer struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Error   string `json:"error"`
}

var ignoreJobID = cmpopts.IgnoreFields(record{}, "JobID")

func TestSendPrivate(t *testing.T) {
	tests := []struct {
		name string
		body map[string]any // botId and target are added
		want record         // id, bot, user and platformIndex are the first send's
		sent fake.TelegramMessage
	}{
		{"text", map[string]any{"content": "hi"},
			record{Content: "hi", MsgType: 0, Status: "SUCCESS"},
			fake.TelegramMessage{Method: "sendMessage", Text: "hi"}},
		{"markdown", map[string]any{"content": "**b** <x>", "msgType": 2, "targetType": "user"},
			record{Content: "**b** <x>", MsgType: 2, Status: "SUCCESS"},
			fake.TelegramMessage{Method: "sendMessage", Text: "<b>b</b> &lt;x&gt;", ParseMode: "HTML"}},
		{"image by msgType", map[string]any{"msgType": 7, "imageUrl": "https://e.com/a.png", "content": "cap"},
			record{Content: "cap", MsgType: 7, Status: "SUCCESS"},
			fake.TelegramMessage{Method: "sendPhoto", Text: "cap", Photo: "https://e.com/a.png"}},
		{"image by url alone", map[string]any{"imageUrl": "https://e.com/b.png", "isWakeup": false},
			record{MsgType: 7, Status: "SUCCESS"},
			fake.TelegramMessage{Method: "sendPhoto", Photo: "https://e.com/b.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testkit.New(t)
			f := h.Seed(t)
			body := maps.Clone(tt.body)
			body["botId"], body["target"] = f.Bot.ID, itoa(f.Target.ID)
			want := tt.want
			want.ID, want.Bot, want.User, want.PlatformIndex = 1, f.Bot.ID, f.Account.ID, f.Target.Address+":1"
			r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var got singleAnswer
			r.Decode(t, &got)
			if diff := cmp.Diff(singleAnswer{Code: 0, Message: "", Data: &want}, got, ignoreJobID); diff != "" {
				t.Fatalf("answer (-want +got):\n%s", diff)
			}
			if !push.ValidJobID(got.Data.JobID) {
				t.Fatalf("jobId %q is not a UUID", got.Data.JobID)
			}
			msgs := h.Telegram.Messages()
			if len(msgs) != 1 {
				t.Fatalf("platform received %d messages, want 1", len(msgs))
			}
			m := msgs[0]
			if diff := cmp.Diff(tt.sent, m, cmpopts.IgnoreFields(fake.TelegramMessage{}, "Token", "ChatID", "MessageID", "At")); diff != "" {
				t.Fatalf("platform received (-want +got):\n%s", diff)
			}
			if m.ChatID != f.Target.Address {
				t.Fatalf("sent to chat %s, want %s", m.ChatID, f.Target.Address)
			}
		})
	}
}

func TestSendCompat(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	r := h.Call(t, "POST", "/openapi/send", "", map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "content": "# old", "msg_type": 2},
		"X-Service-OpenAPI-Key", f.Key)
	var got singleAnswer
	r.Decode(t, &got)
	want := singleAnswer{Data: &record{ID: 1, Bot: f.Bot.ID, User: f.Account.ID, Content: "# old", MsgType: 2, Status: "SUCCESS", PlatformIndex: f.Target.Address + ":1"}}
	if diff := cmp.Diff(want, got, ignoreJobID); r.Status != 200 || diff != "" {
		t.Fatalf("status %d, answer (-want +got):\n%s", r.Status, diff)
	}
	r = h.Call(t, "POST", "/openapi/send", f.Key, map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "image_url": "https://e.com/c.png"})
	r.Decode(t, &got)
	if r.Status != 200 || got.Data.MsgType != 7 || h.Telegram.Messages()[1].Photo != "https://e.com/c.png" {
		t.Fatalf("image_url send: %d %s", r.Status, r.Body)
	}
}

func TestSendPendingAndUncertainAndFailed(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond}))
	f := h.Seed(t)
	body := map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "x"}

	h.Telegram.SetDelay(500 * time.Millisecond)
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body)
	var got singleAnswer
	r.Decode(t, &got)
	if r.Status != http.StatusAccepted || got.Code != 0 || !got.Data.Pending || got.Data.Uncertain || !push.ValidJobID(got.Data.JobID) {
		t.Fatalf("slow send: %d %s", r.Status, r.Body)
	}
	if got.Data.Status != "QUEUED" && got.Data.Status != "RUNNING" {
		t.Fatalf("pending record status %q", got.Data.Status)
	}
	jobID := got.Data.JobID
	h.WaitJob(t, jobID, push.StateSucceeded, 5*time.Second)
	q := h.Call(t, "GET", "/openapi/queue/"+jobID, f.Key, nil)
	var job struct {
		Code int            `json:"code"`
		Data map[string]any `json:"data"`
	}
	q.Decode(t, &job)
	if q.Status != 200 || job.Data["status"] != "succeeded" || job.Data["success"] != true || job.Data["pending"] != false {
		t.Fatalf("job query after delivery: %d %s", q.Status, q.Body)
	}
	h.Telegram.SetDelay(0)

	h.Telegram.DropNext(1)
	r = h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body)
	r.Decode(t, &got)
	if r.Status != http.StatusAccepted || got.Code != 0 || got.Data.Pending || !got.Data.Uncertain || got.Data.Status != "UNCERTAIN" || got.Data.Error == "" {
		t.Fatalf("dropped send: %d %s", r.Status, r.Body)
	}

	h.Telegram.Fail(fake.TelegramFault{Status: 400, Description: "Bad Request: chat not found"})
	r = h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body)
	r.Decode(t, &got)
	if r.Status != http.StatusInternalServerError || got.Code != 500 || got.Error != "platform_failed" || got.Data == nil || got.Data.Status != "FAILED" {
		t.Fatalf("refused send: %d %s", r.Status, r.Body)
	}
}

func TestBatchSend(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	t2 := h.Target(t, f.Bot.ID, push.TargetGroup, "")
	r := h.Call(t, "POST", "/openapi/batch-send", f.Key, map[string]any{"bot_id": f.Bot.ID, "target_ids": []int64{f.Target.ID, t2.ID}, "content": "all"})
	type item struct {
		TargetID  int64  `json:"target_id"`
		Success   bool   `json:"success"`
		MessageID int64  `json:"message_id"`
		JobID     string `json:"jobId"`
		Status    string `json:"status"`
		Pending   bool   `json:"pending"`
		Uncertain bool   `json:"uncertain"`
		Error     string `json:"error,omitempty"`
	}
	var got struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Total   int    `json:"total"`
			Success int    `json:"success"`
			Failed  int    `json:"failed"`
			Results []item `json:"results"`
		} `json:"data"`
	}
	r.Decode(t, &got)
	if r.Status != 200 || got.Code != 0 || got.Message != "2 succeeded, 0 failed, 0 pending, 0 uncertain" {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	want := []item{
		{TargetID: f.Target.ID, Success: true, MessageID: 1, Status: "succeeded"},
		{TargetID: t2.ID, Success: true, MessageID: 2, Status: "succeeded"},
	}
	if diff := cmp.Diff(want, got.Data.Results, cmpopts.IgnoreFields(item{}, "JobID")); diff != "" || got.Data.Total != 2 || got.Data.Success != 2 || got.Data.Failed != 0 {
		t.Fatalf("results (-want +got):\n%s\n%s", diff, r.Body)
	}

	// One failing target, one slow: a failed count, and a pending item with its jobId and a queued status.
	h.Telegram.Fail(fake.TelegramFault{Status: 400, Description: "Bad Request: chat not found"})
	slow := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 50 * time.Millisecond}))
	sf := slow.Seed(t)
	slow.Telegram.SetDelay(300 * time.Millisecond)
	r = slow.Call(t, "POST", "/openapi/batch-send", sf.Key, map[string]any{"bot_id": sf.Bot.ID, "target_ids": []int64{sf.Target.ID}, "content": "slow"})
	r.Decode(t, &got)
	if r.Status != http.StatusAccepted || got.Data.Results[0].Status != "queued" || !got.Data.Results[0].Pending || got.Data.Results[0].JobID == "" || got.Data.Success != 0 || got.Data.Failed != 0 {
		t.Fatalf("pending batch: %d %s", r.Status, r.Body)
	}
	r = h.Call(t, "POST", "/openapi/batch-send", f.Key, map[string]any{"bot_id": f.Bot.ID, "target_ids": []int64{f.Target.ID}, "content": "fail"})
	r.Decode(t, &got)
	if r.Status != 200 || got.Data.Failed != 1 || got.Data.Results[0].Success || got.Data.Results[0].Status != "failed" || got.Data.Results[0].Error == "" {
		t.Fatalf("failing batch: %d %s", r.Status, r.Body)
	}
}

func TestMultiBotBatch(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	b2 := h.TelegramBot(t, f.Account.ID)
	t2 := h.Target(t, b2.ID, push.TargetUser, "")
	r := h.Call(t, "POST", "/openapi/v1/push/batch", f.Key, map[string]any{
		"bots": []any{
			map[string]any{"botId": f.Bot.ID, "targets": []string{itoa(f.Target.ID)}},
			map[string]any{"bot_id": b2.ID, "targets": []string{itoa(t2.ID)}},
		},
		"content": "multi", "msgType": 0,
	})
	type item struct {
		BotID     int64  `json:"botId"`
		Target    string `json:"target"`
		Status    string `json:"status"`
		MessageID int64  `json:"message_id"`
		JobID     string `json:"jobId"`
	}
	var got struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Total          int    `json:"total"`
			SuccessCount   int    `json:"success_count"`
			FailCount      int    `json:"fail_count"`
			PendingCount   int    `json:"pending_count"`
			UncertainCount int    `json:"uncertain_count"`
			Results        []item `json:"results"`
		} `json:"data"`
	}
	r.Decode(t, &got)
	d := got.Data
	if r.Status != 200 || got.Code != 0 || d.Total != 2 || d.SuccessCount != 2 || d.FailCount != 0 || d.PendingCount != 0 || d.UncertainCount != 0 {
		t.Fatalf("multi: %d %s", r.Status, r.Body)
	}
	want := []item{
		{BotID: f.Bot.ID, Target: itoa(f.Target.ID), Status: "success", MessageID: 1},
		{BotID: b2.ID, Target: itoa(t2.ID), Status: "success", MessageID: 2},
	}
	if diff := cmp.Diff(want, d.Results, cmpopts.IgnoreFields(item{}, "JobID")); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
	// Pending and uncertain items are counted apart and carry their jobId.
	h.Telegram.DropNext(1)
	slowH := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 50 * time.Millisecond}))
	sf := slowH.Seed(t)
	slowH.Telegram.SetDelay(300 * time.Millisecond)
	r = slowH.Call(t, "POST", "/openapi/v1/push/batch", sf.Key, map[string]any{"bots": []any{map[string]any{"botId": sf.Bot.ID, "targets": []string{itoa(sf.Target.ID)}}}, "content": "p"})
	r.Decode(t, &got)
	if r.Status != http.StatusAccepted || got.Data.PendingCount != 1 || got.Data.Results[0].Status != "pending" || got.Data.Results[0].JobID == "" {
		t.Fatalf("pending multi: %d %s", r.Status, r.Body)
	}
	r = h.Call(t, "POST", "/openapi/v1/push/batch", f.Key, map[string]any{"bots": []any{map[string]any{"botId": f.Bot.ID, "targets": []string{itoa(f.Target.ID)}}}, "content": "u"})
	r.Decode(t, &got)
	if r.Status != 200 || got.Data.UncertainCount != 1 || got.Data.Results[0].Status != "uncertain" || got.Data.SuccessCount != 0 || got.Data.FailCount != 0 {
		t.Fatalf("uncertain multi: %d %s", r.Status, r.Body)
	}
}

func TestQueryJob(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "q"})
	var sent singleAnswer
	r.Decode(t, &sent)
	q := h.Call(t, "GET", "/openapi/queue/"+sent.Data.JobID, "", nil, "X-Service-OpenAPI-Key", f.Key)
	var got struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}
	q.Decode(t, &got)
	want := map[string]any{
		"jobId": sent.Data.JobID, "status": "succeeded", "success": true, "pending": false, "uncertain": false,
		"messageId": 1.0, "botId": float64(f.Bot.ID), "targetId": float64(f.Target.ID), "msgType": 0.0,
		"platformIndex": f.Target.Address + ":1", "attempts": 1.0,
	}
	for _, k := range []string{"createdAt", "updatedAt", "startedAt", "finishedAt"} {
		if _, err := time.Parse(time.RFC3339Nano, got.Data[k].(string)); err != nil {
			t.Fatalf("%s = %v, not an RFC 3339 time", k, got.Data[k])
		}
		delete(got.Data, k)
	}
	if diff := cmp.Diff(want, got.Data); q.Status != 200 || got.Code != 0 || diff != "" {
		t.Fatalf("job (-want +got):\n%s", diff)
	}
	// A queued job: success is null.
	held := testkit.New(t, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}))
	hf := held.Seed(t)
	r = held.Call(t, "POST", "/openapi/v1/push/private", hf.Key, map[string]any{"botId": hf.Bot.ID, "target": itoa(hf.Target.ID), "content": "q"})
	r.Decode(t, &sent)
	q = held.Call(t, "GET", "/openapi/queue/"+sent.Data.JobID, hf.Key, nil)
	q.Decode(t, &got)
	if v, ok := got.Data["success"]; !ok || v != nil || got.Data["pending"] != true || got.Data["status"] != "queued" || got.Data["startedAt"] != nil {
		t.Fatalf("queued job: %s", q.Body)
	}
}

func TestQueueRequestByKey(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "k"}, "Idempotency-Key", "order-7")
	var sent singleAnswer
	r.Decode(t, &sent)

	q := h.Call(t, "GET", "/openapi/queue-request?key=order-7", f.Key, nil)
	var got struct {
		Code int            `json:"code"`
		Data map[string]any `json:"data"`
	}
	q.Decode(t, &got)
	if q.Status != 200 || got.Code != 0 || got.Data["jobId"] != sent.Data.JobID || got.Data["status"] != "succeeded" || got.Data["idempotencyKey"] != "order-7" {
		t.Fatalf("by key: %d %s", q.Status, q.Body)
	}
	rec := got.Data["record"].(map[string]any)
	if rec["status"] != "SUCCESS" || rec["jobId"] != sent.Data.JobID {
		t.Fatalf("record: %v", rec)
	}

	q = h.Call(t, "GET", "/openapi/queue-request?key=never-used", f.Key, nil)
	var none struct {
		Code int  `json:"code"`
		Data *any `json:"data"`
	}
	q.Decode(t, &none)
	if q.Status != 200 || none.Code != 0 || none.Data != nil || !containsJSON(q.Body, `"data":null`) {
		t.Fatalf("unknown key: %d %s", q.Status, q.Body)
	}
	// Another account does not see the key.
	other := h.Account(t, "other")
	q = h.Call(t, "GET", "/openapi/queue-request?key=order-7", h.Key(t, other.ID), nil)
	if !containsJSON(q.Body, `"data":null`) {
		t.Fatalf("another account's key lookup: %s", q.Body)
	}
	// A batch key is not recovered this way.
	h.Call(t, "POST", "/openapi/batch-send", f.Key, map[string]any{"bot_id": f.Bot.ID, "target_ids": []int64{f.Target.ID}, "content": "b"}, "Idempotency-Key", "batch-1")
	q = h.Call(t, "GET", "/openapi/queue-request?key=batch-1", f.Key, nil)
	var e errAnswer
	q.Decode(t, &e)
	if q.Status != 400 || e.Error != "batch_key" {
		t.Fatalf("batch key: %d %s", q.Status, q.Body)
	}
}

func TestCancelEndpoint(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}))
	f := h.Seed(t)
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "c"})
	var sent singleAnswer
	r.Decode(t, &sent)
	if r.Status != 202 || h.Balance(t, f.Account.ID) != 99 {
		t.Fatalf("send: %d %s, balance %d", r.Status, r.Body, h.Balance(t, f.Account.ID))
	}
	c := h.Call(t, "POST", "/openapi/queue/"+sent.Data.JobID+"/cancel", f.Key, nil)
	var got struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}
	c.Decode(t, &got)
	if c.Status != 200 || got.Data["status"] != "canceled" || got.Data["success"] != false || h.Balance(t, f.Account.ID) != 100 {
		t.Fatalf("cancel: %d %s, balance %d", c.Status, c.Body, h.Balance(t, f.Account.ID))
	}
	c = h.Call(t, "POST", "/openapi/queue/"+sent.Data.JobID+"/cancel", f.Key, nil)
	var e errAnswer
	c.Decode(t, &e)
	if c.Status != 409 || e.Code != 409 || e.Error != "job_not_queued" || h.Balance(t, f.Account.ID) != 100 {
		t.Fatalf("second cancel: %d %s", c.Status, c.Body)
	}
	other := h.Account(t, "other")
	c = h.Call(t, "POST", "/openapi/queue/"+sent.Data.JobID+"/cancel", h.Key(t, other.ID), nil)
	if c.Status != 404 {
		t.Fatalf("cancel by another account: %d %s", c.Status, c.Body)
	}
	// A replay of the canceled send reports the cancel.
	h2 := h.Call(t, "GET", "/openapi/queue/"+sent.Data.JobID, f.Key, nil)
	if h2.Status != 200 || !containsJSON(h2.Body, `"status":"canceled"`) {
		t.Fatalf("query after cancel: %s", h2.Body)
	}
}

func TestIdempotentReplayOverHTTP(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	body := map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "once"}
	first := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body, "Idempotency-Key", "same")
	second := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, body, "Idempotency-Key", "same")
	if first.Header.Get("Idempotency-Replay") != "" || second.Header.Get("Idempotency-Replay") != "true" {
		t.Fatalf("Idempotency-Replay headers: %q, %q", first.Header.Get("Idempotency-Replay"), second.Header.Get("Idempotency-Replay"))
	}
	if string(first.Body) != string(second.Body) {
		t.Fatalf("replay answered differently:\n%s\n%s", first.Body, second.Body)
	}
	// The compatibility endpoint is the same kind: the same message there replays.
	compat := h.Call(t, "POST", "/openapi/send", f.Key, map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "content": "once"}, "Idempotency-Key", "same")
	if compat.Header.Get("Idempotency-Replay") != "true" {
		t.Fatalf("compat replay: %s", compat.Body)
	}
	conflict := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "twice"}, "Idempotency-Key", "same")
	var e errAnswer
	conflict.Decode(t, &e)
	if conflict.Status != 409 || e.Error != "idempotency_conflict" {
		t.Fatalf("conflict: %d %s", conflict.Status, conflict.Body)
	}
	if len(h.Telegram.Messages()) != 1 || h.Balance(t, f.Account.ID) != 99 {
		t.Fatalf("%d deliveries, balance %d; want 1 and 99", len(h.Telegram.Messages()), h.Balance(t, f.Account.ID))
	}
}

func containsJSON(body []byte, fragment string) bool {
	return strings.Contains(string(body), fragment)
}
