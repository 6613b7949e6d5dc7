package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// MsgType is a message's kind.
type MsgType int

// The message kinds of the contract.
const (
	// Text is plain text (at most 2000 characters by default).
	Text MsgType = 0
	// Markdown is Markdown, sent in the platform's markup (Telegram: HTML).
	Markdown MsgType = 2
	// Image is an image, given by its URL.
	Image MsgType = 7
)

// Message is one message to one target of a bot.
type Message struct {
	// BotID is the bot that sends it; it must belong to the key's
	// account.
	BotID int64
	// TargetID is the target bound to the bot; 0 for the platforms that
	// have no targets (push relays, workplace webhooks).
	TargetID int64
	// Content is the text, or an image's caption.
	Content string
	// Type is the message's kind (default Text). An ImageURL makes it an
	// image whatever Type says.
	Type MsgType
	// ImageURL is the image's URL.
	ImageURL string
	// TargetType is "user" or "group"; empty for the bound target's type.
	TargetType string
	// Wakeup sends in the platform's wake-up mode.
	Wakeup bool
	// Key is the send's Idempotency-Key (1 to 100 of letters, digits,
	// '_', ':' and '-'). Empty: Send makes a new one (NewKey) for this
	// send, and uses it on every retry. Give one, and store it before
	// sending, to recover the send after a crash (Client.Recover).
	Key string
}

// Result is what became of one message, read by the contract's rules.
// Only Outcome Delivered is a delivery.
type Result struct {
	// Outcome is what became of the message.
	Outcome Outcome `json:"outcome"`
	// Key is the Idempotency-Key the send was made under.
	Key string `json:"key"`
	// JobID is the message's job: query it (Client.Job, Client.Wait)
	// while Pending.
	JobID string `json:"jobId,omitempty"`
	// MessageID is the message record's id.
	MessageID int64 `json:"messageId,omitempty"`
	// BotID is the bot that sends it.
	BotID int64 `json:"botId,omitempty"`
	// Status is the record's status: SUCCESS, or the job's state in
	// capitals (QUEUED, RUNNING, FAILED, UNCERTAIN, CANCELED, EXPIRED).
	Status string `json:"status,omitempty"`
	// PlatformIndex is the platform's id of the delivered message.
	PlatformIndex string `json:"platformIndex,omitempty"`
	// Detail is why a message is not delivered (the platform's answer, a
	// retry under way), or the server's note.
	Detail string `json:"detail,omitempty"`
	// Replayed says the server answered from the record of an earlier
	// request made with the same key: nothing was sent this time.
	Replayed bool `json:"replayed,omitempty"`
	// HTTPStatus is the status of the answer (0 when none was read).
	HTTPStatus int `json:"httpStatus,omitempty"`
}

// NewKey returns a new random Idempotency-Key: 32 hexadecimal digits.
func NewKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// privateBody is the body of POST /openapi/v1/push/private.
type privateBody struct {
	BotID      int64   `json:"botId"`
	Target     string  `json:"target,omitempty"`
	Content    string  `json:"content,omitempty"`
	MsgType    MsgType `json:"msgType,omitempty"`
	ImageURL   string  `json:"imageUrl,omitempty"`
	TargetType string  `json:"targetType,omitempty"`
	IsWakeup   bool    `json:"isWakeup,omitempty"`
}

// compatBody is the body of POST /openapi/send, in the older names.
type compatBody struct {
	BotID      int64   `json:"bot_id"`
	TargetID   int64   `json:"target_id,omitempty"`
	Content    string  `json:"content,omitempty"`
	MsgType    MsgType `json:"msg_type,omitempty"`
	ImageURL   string  `json:"image_url,omitempty"`
	TargetType string  `json:"target_type,omitempty"`
	IsWakeup   bool    `json:"is_wakeup,omitempty"`
}

// record is the message record of a single send's answer.
type record struct {
	ID            int64  `json:"id"`
	Bot           int64  `json:"bot"`
	Status        string `json:"status"`
	PlatformIndex string `json:"platformIndex"`
	JobID         string `json:"jobId"`
	Pending       bool   `json:"pending"`
	Uncertain     bool   `json:"uncertain"`
	Error         string `json:"error"`
}

// Send sends one message to one target (POST
// /openapi/v1/push/private) and reads the answer by the contract's rules.
//
// The error is nil when the server took the message: the Result's
// Outcome says what became of it (Delivered, Pending, Uncertain or
// Failed). Otherwise the Result still holds the Key, and the error says
// why:
//
//   - a refusal: an *Error, with Outcome Refused. Nothing was charged,
//     queued or sent. A 429 or 503 is retried first, with the same key
//     and body, after the wait the server asks (Retry-After).
//   - an unknown result: an error matching ErrUnknownResult (an
//     *UnknownResultError carrying the key), with Outcome Unknown. The
//     request may have arrived; recover it with Client.Recover and the
//     key. It is never sent again under another key.
//   - no request reached the server (it could not be reached after the
//     retries), with Outcome Unknown.
func (c *Client) Send(ctx context.Context, m Message) (Result, error) {
	b := privateBody{BotID: m.BotID, Content: m.Content, MsgType: m.Type, ImageURL: m.ImageURL, TargetType: m.TargetType, IsWakeup: m.Wakeup}
	if m.TargetID != 0 {
		b.Target = strconv.FormatInt(m.TargetID, 10)
	}
	return c.sendOne(ctx, "/openapi/v1/push/private", b, m.Key)
}

// SendCompat is Send through the compatibility endpoint (POST
// /openapi/send, the older field names), for servers or gateways that
// expose only it. It behaves as Send.
func (c *Client) SendCompat(ctx context.Context, m Message) (Result, error) {
	return c.sendOne(ctx, "/openapi/send", compatBody{BotID: m.BotID, TargetID: m.TargetID, Content: m.Content, MsgType: m.Type,
		ImageURL: m.ImageURL, TargetType: m.TargetType, IsWakeup: m.Wakeup}, m.Key)
}

// sendOne posts a single send under key (a new one when empty) and reads
// its answer.
func (c *Client) sendOne(ctx context.Context, path string, body any, key string) (Result, error) {
	if key == "" {
		key = NewKey()
	}
	res := Result{Key: key}
	data, err := json.Marshal(body)
	if err != nil {
		return res, fmt.Errorf("herald: encode the send: %w", err)
	}
	a, err := c.do(ctx, request{method: http.MethodPost, path: path, body: data, key: key, unsafe: true})
	if err != nil {
		return res, err
	}
	res.HTTPStatus = a.status
	res.Replayed = a.header.Get("Idempotency-Replay") == "true"
	var rec record
	switch {
	case a.herald && *a.env.Code == 0 && (a.status == http.StatusOK || a.status == http.StatusAccepted):
		if err := a.decode(&rec); err != nil {
			return res, &UnknownResultError{Key: key, Err: err}
		}
		res.fill(rec, a.env.Message)
		res.Outcome = recordOutcome(rec.Status, rec.Pending, rec.Uncertain, a.status == http.StatusAccepted)
		return res, nil
	case a.herald && a.env.Error == string(ReasonPlatformFailed) && a.hasData():
		// Rule 1: a code other than 0 is never a success. The platform
		// refused the message: a result, not an error of the request.
		if err := a.decode(&rec); err != nil {
			return res, &UnknownResultError{Key: key, Err: err}
		}
		res.fill(rec, a.env.Message)
		res.Outcome = Failed
		return res, nil
	case refused(a):
		res.Outcome = Refused
		return res, a.err()
	default:
		// A 500 internal, a proxy's 502 or 504, or an answer that is not
		// Herald's: the server may have taken the message.
		return res, &UnknownResultError{Key: key, Err: unexpected(a)}
	}
}

// refused reports whether an answer refused a send before anything was
// done: a 4xx, a 503 (after the retries), or a redirect the client did
// not follow (the send was not made there).
func refused(a answer) bool {
	return a.status >= 300 && a.status < 500 || a.status == http.StatusServiceUnavailable
}

// fill copies a message record into the result.
func (r *Result) fill(rec record, message string) {
	r.JobID, r.MessageID, r.BotID, r.Status, r.PlatformIndex = rec.JobID, rec.ID, rec.Bot, rec.Status, rec.PlatformIndex
	r.Detail = rec.Error
	if r.Detail == "" {
		r.Detail = message
	}
}

// unexpected describes an answer the contract does not give for a
// request: an *Error for a status of 400 or more, else an error naming
// the status.
func unexpected(a answer) error {
	if a.status >= 400 {
		return a.err()
	}
	if !a.herald {
		return fmt.Errorf("herald: %d answer: %w", a.status, errNoBody)
	}
	return fmt.Errorf("herald: %d answer with code %d: %s", a.status, *a.env.Code, a.env.Message)
}
