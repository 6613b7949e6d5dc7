package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Batch is one message to several targets of one bot (at most 50).
type Batch struct {
	// BotID is the bot that sends it.
	BotID int64
	// TargetIDs are the targets, bound to the bot.
	TargetIDs []int64
	// Content, Type and ImageURL are the message, as in Message.
	Content  string
	Type     MsgType
	ImageURL string
	// Key is the batch's Idempotency-Key; empty: a new one (NewKey).
	Key string
}

// Multi is one message to targets of several bots (at most 50 targets in
// all).
type Multi struct {
	// Groups are the bots and their targets; each has at least one.
	Groups []Group
	// Content, Type and ImageURL are the message, as in Message.
	Content  string
	Type     MsgType
	ImageURL string
	// Key is the batch's Idempotency-Key; empty: a new one (NewKey).
	Key string
}

// Group is one bot of a Multi and its targets.
type Group struct {
	BotID     int64
	TargetIDs []int64
}

// BatchResult is what became of each message of a batch. Read every item
// (rule 6): a batch has no single outcome.
type BatchResult struct {
	// Key is the Idempotency-Key the batch was made under. A batch is not
	// recovered by its key (Recover refuses it): resubmit the identical
	// request with the same key to get its items again, then query each
	// job.
	Key string `json:"key"`
	// Items are the targets' results, in the order of the request.
	Items []Item `json:"items"`
	// Summary is the server's summary of the counts.
	Summary string `json:"summary,omitempty"`
	// Replayed says the answer came from the record of an earlier request
	// with the same key.
	Replayed bool `json:"replayed,omitempty"`
	// HTTPStatus is the status of the answer.
	HTTPStatus int `json:"httpStatus,omitempty"`
}

// Item is the result of one target of a batch.
type Item struct {
	// Outcome is what became of the message to this target.
	Outcome Outcome `json:"outcome"`
	// BotID is the bot (of a Multi; 0 in a Batch's items, whose bot is the
	// Batch's).
	BotID int64 `json:"botId,omitempty"`
	// TargetID is the target.
	TargetID int64 `json:"targetId"`
	// JobID is the message's job: query it while Pending.
	JobID string `json:"jobId,omitempty"`
	// MessageID is the message record's id.
	MessageID int64 `json:"messageId,omitempty"`
	// Status is the server's status of the item.
	Status string `json:"status,omitempty"`
	// Detail is why the message is not delivered, when it is not.
	Detail string `json:"detail,omitempty"`
}

// Count returns how many items have the outcome.
func (b BatchResult) Count(o Outcome) int {
	n := 0
	for _, it := range b.Items {
		if it.Outcome == o {
			n++
		}
	}
	return n
}

// Settled reports whether no item is Pending.
func (b BatchResult) Settled() bool { return b.Count(Pending) == 0 }

// batchBody is the body of POST /openapi/batch-send.
type batchBody struct {
	BotID     int64   `json:"bot_id"`
	TargetIDs []int64 `json:"target_ids"`
	Content   string  `json:"content,omitempty"`
	MsgType   MsgType `json:"msg_type,omitempty"`
	ImageURL  string  `json:"image_url,omitempty"`
}

// multiBody is the body of POST /openapi/v1/push/batch.
type multiBody struct {
	Bots     []multiGroup `json:"bots"`
	Content  string       `json:"content,omitempty"`
	MsgType  MsgType      `json:"msgType,omitempty"`
	ImageURL string       `json:"imageUrl,omitempty"`
}

type multiGroup struct {
	BotID   int64    `json:"botId"`
	Targets []string `json:"targets"`
}

// batchItem is an item of /openapi/batch-send's results; pending,
// uncertain and error are Herald's additions to the contract's fields.
type batchItem struct {
	TargetID  int64  `json:"target_id"`
	Success   bool   `json:"success"`
	MessageID int64  `json:"message_id"`
	JobID     string `json:"jobId"`
	Status    string `json:"status"`
	Pending   bool   `json:"pending"`
	Uncertain bool   `json:"uncertain"`
	Error     string `json:"error"`
}

// outcome reads the item: its flags and status first (uncertain, then
// pending), then success, which alone makes an item delivered. An item
// with no status (the contract's own {target_id, success, message_id}) is
// delivered or failed by success; one whose status and success disagree
// is never read as delivered.
func (it batchItem) outcome() Outcome {
	o := recordOutcome(it.Status, it.Pending, it.Uncertain, false)
	switch {
	case o == Pending || o == Uncertain:
		return o
	case it.Status == "" && it.Success:
		return Delivered
	case it.Status == "":
		return Failed
	case (o == Delivered) != it.Success:
		return Uncertain
	}
	return o
}

// multiItem is an item of /openapi/v1/push/batch's results.
type multiItem struct {
	BotID     int64  `json:"botId"`
	Target    string `json:"target"`
	Status    string `json:"status"`
	MessageID int64  `json:"message_id"`
	JobID     string `json:"jobId"`
	Error     string `json:"error"`
}

// SendBatch sends one message to several targets of one bot (POST
// /openapi/batch-send). Its error is as Send's: nil when the server took
// the batch, and then every Item has its own Outcome.
func (c *Client) SendBatch(ctx context.Context, b Batch) (BatchResult, error) {
	targets := b.TargetIDs
	if targets == nil {
		targets = []int64{}
	}
	var data struct {
		Results []batchItem `json:"results"`
	}
	res, err := c.sendMany(ctx, "/openapi/batch-send", batchBody{BotID: b.BotID, TargetIDs: targets, Content: b.Content, MsgType: b.Type, ImageURL: b.ImageURL}, b.Key, &data)
	if err != nil {
		return res, err
	}
	for _, it := range data.Results {
		res.Items = append(res.Items, Item{Outcome: it.outcome(), TargetID: it.TargetID, JobID: it.JobID, MessageID: it.MessageID, Status: it.Status, Detail: it.Error})
	}
	return res, nil
}

// SendMulti sends one message to targets of several bots (POST
// /openapi/v1/push/batch). Its error is as Send's: nil when the server
// took the batch, and then every Item has its own Outcome.
func (c *Client) SendMulti(ctx context.Context, m Multi) (BatchResult, error) {
	body := multiBody{Bots: make([]multiGroup, len(m.Groups)), Content: m.Content, MsgType: m.Type, ImageURL: m.ImageURL}
	for i, g := range m.Groups {
		body.Bots[i] = multiGroup{BotID: g.BotID, Targets: make([]string, len(g.TargetIDs))}
		for j, t := range g.TargetIDs {
			body.Bots[i].Targets[j] = strconv.FormatInt(t, 10)
		}
	}
	var data struct {
		Results []multiItem `json:"results"`
	}
	res, err := c.sendMany(ctx, "/openapi/v1/push/batch", body, m.Key, &data)
	if err != nil {
		return res, err
	}
	for _, it := range data.Results {
		target, _ := strconv.ParseInt(it.Target, 10, 64)
		res.Items = append(res.Items, Item{Outcome: recordOutcome(it.Status, false, false, false), BotID: it.BotID, TargetID: target,
			JobID: it.JobID, MessageID: it.MessageID, Status: it.Status, Detail: it.Error})
	}
	return res, nil
}

// sendMany posts a batch under key (a new one when empty) and decodes the
// data of its answer into data.
func (c *Client) sendMany(ctx context.Context, path string, body any, key string, data any) (BatchResult, error) {
	if key == "" {
		key = NewKey()
	}
	res := BatchResult{Key: key}
	raw, err := json.Marshal(body)
	if err != nil {
		return res, fmt.Errorf("herald: encode the batch: %w", err)
	}
	a, err := c.do(ctx, request{method: http.MethodPost, path: path, body: raw, key: key, unsafe: true})
	if err != nil {
		return res, err
	}
	res.HTTPStatus = a.status
	res.Replayed = a.header.Get("Idempotency-Replay") == "true"
	switch {
	case a.herald && *a.env.Code == 0 && (a.status == http.StatusOK || a.status == http.StatusAccepted):
		if err := a.decode(data); err != nil {
			return res, &UnknownResultError{Key: key, Err: err}
		}
		res.Summary = a.env.Message
		return res, nil
	case refused(a):
		return res, a.err()
	default:
		return res, &UnknownResultError{Key: key, Err: unexpected(a)}
	}
}
