package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// State is a job's state.
type State string

// The job states of the contract.
const (
	StateQueued    State = "queued"    // waiting for a worker
	StateRunning   State = "running"   // being sent
	StateSucceeded State = "succeeded" // delivered
	StateFailed    State = "failed"    // not delivered
	StateCanceled  State = "canceled"  // not delivered; its points were returned
	StateExpired   State = "expired"   // not started in time; its points were returned
	StateUncertain State = "uncertain" // may have been delivered: verify, never resend
)

// Job is the job of one message to one target, as the job query answers
// it.
type Job struct {
	// ID is the job's id (a UUID).
	ID string `json:"jobId"`
	// State is the job's state.
	State State `json:"status"`
	// Outcome is the state read by the contract's rules.
	Outcome Outcome `json:"outcome"`
	// Success is true when delivered, false when not, nil while pending.
	Success *bool `json:"success"`
	// Pending is true while queued or running.
	Pending bool `json:"pending"`
	// Uncertain is true when delivery needs verification.
	Uncertain bool `json:"uncertain"`
	// MessageID is the message record's id.
	MessageID int64 `json:"messageId"`
	// BotID and TargetID (0 on platforms without targets) are where it
	// goes.
	BotID    int64 `json:"botId"`
	TargetID int64 `json:"targetId,omitempty"`
	// MsgType is the message's kind.
	MsgType MsgType `json:"msgType"`
	// PlatformIndex is the platform's id of the delivered message.
	PlatformIndex string `json:"platformIndex,omitempty"`
	// Error is why the job is not delivered, or a retry under way.
	Error string `json:"error,omitempty"`
	// Attempts counts the platform calls made.
	Attempts int `json:"attempts"`
	// The job's times; StartedAt and FinishedAt are zero until then.
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// ResolvedAt, ResolvedBy and Note are set on an uncertain job that a
	// person or a check resolved.
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
	ResolvedBy string    `json:"resolvedBy,omitempty"`
	Note       string    `json:"note,omitempty"`
}

// UnmarshalJSON decodes a job as the server answers it, and reads its
// Outcome from its state and flags.
func (j *Job) UnmarshalJSON(data []byte) error {
	type wire Job
	var w struct {
		wire
		TargetID   *int64     `json:"targetId"`
		StartedAt  *time.Time `json:"startedAt"`
		FinishedAt *time.Time `json:"finishedAt"`
		ResolvedAt *time.Time `json:"resolvedAt"`
		Outcome    any        `json:"outcome"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*j = Job(w.wire)
	if w.TargetID != nil {
		j.TargetID = *w.TargetID
	}
	for _, t := range []struct {
		dst *time.Time
		src *time.Time
	}{{&j.StartedAt, w.StartedAt}, {&j.FinishedAt, w.FinishedAt}, {&j.ResolvedAt, w.ResolvedAt}} {
		if t.src != nil {
			*t.dst = *t.src
		}
	}
	j.Outcome = jobOutcome(string(j.State), j.Success, j.Pending, j.Uncertain)
	return nil
}

// Job returns a job of the key's account (GET /openapi/queue/{id}).
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var j Job
	err := c.call(ctx, request{method: http.MethodGet, path: "/openapi/queue/" + url.PathEscape(id)}, &j)
	return j, err
}

// Cancel cancels a queued job (POST /openapi/queue/{id}/cancel, Herald's
// extension of the contract); its points are returned. A job that has
// started is refused: an *Error with ReasonJobNotQueued.
func (c *Client) Cancel(ctx context.Context, id string) (Job, error) {
	var j Job
	err := c.call(ctx, request{method: http.MethodPost, path: "/openapi/queue/" + url.PathEscape(id) + "/cancel", unsafe: true}, &j)
	return j, err
}

// Wait queries a job until it is settled (its Outcome is no longer
// Pending) and returns it. It pauses between queries for the client's
// PollInterval, doubling up to PollMax. An uncertain job is settled: the
// server never sends it again, and only a person (or a check) resolves
// it. When ctx ends first, Wait returns the job as last seen with an
// error that wraps ctx's.
func (c *Client) Wait(ctx context.Context, id string) (Job, error) {
	pause := c.pollMin
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			return j, err
		}
		if j.Outcome.Settled() {
			return j, nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return j, fmt.Errorf("herald: job %s is still %s: %w", id, j.State, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, c.pollMax)
	}
}

// keyedRecord is the message record in the answer of GET
// /openapi/queue-request, beside the job's fields.
type keyedRecord struct {
	Record record `json:"record"`
}

// Recover finds out what became of a single send made under key (GET
// /openapi/queue-request), typically after an error matching
// ErrUnknownResult. Its Result is as Send's, read from the job as it is
// now. When the server has no send under the key, the error is ErrNotSent
// and the original message may be sent again with the original key. A
// batch's key is refused (ReasonBatchKey): a batch is recovered by
// resubmitting it identically under its key.
func (c *Client) Recover(ctx context.Context, key string) (Result, error) {
	res := Result{Key: key}
	a, err := c.do(ctx, request{method: http.MethodGet, path: "/openapi/queue-request", query: url.Values{"key": {key}}})
	if err != nil {
		return res, err
	}
	res.HTTPStatus = a.status
	if a.status != http.StatusOK || !a.herald || *a.env.Code != 0 {
		if a.status >= 400 && a.status < 500 {
			res.Outcome = Refused
		}
		return res, unexpected(a)
	}
	if !a.hasData() {
		return res, ErrNotSent
	}
	var j Job
	var k keyedRecord
	if err := a.decode(&j); err != nil {
		return res, err
	}
	if err := a.decode(&k); err != nil {
		return res, err
	}
	res.fill(k.Record, a.env.Message)
	if res.JobID == "" {
		res.JobID = j.ID
	}
	// The job is the truth; the record is read as a single send's answer
	// where the server gave no job state.
	res.Outcome = j.Outcome
	if j.State == "" {
		res.Outcome = recordOutcome(k.Record.Status, k.Record.Pending, k.Record.Uncertain, false)
	}
	return res, nil
}

// call makes a request of the job or management API and decodes the data
// of a 2xx answer into out (when not nil). Any other answer is an error:
// an *Error for a refusal.
func (c *Client) call(ctx context.Context, r request, out any) error {
	a, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if a.status < 200 || a.status > 299 || !a.herald || *a.env.Code != 0 {
		err := unexpected(a)
		if r.unsafe && (a.status >= 500 && a.status != http.StatusServiceUnavailable) {
			return &UnknownResultError{Err: err}
		}
		return err
	}
	if out == nil {
		return nil
	}
	return a.decode(out)
}
