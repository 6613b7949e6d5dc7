package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// ManagedJob is a job as the management API shows it: the job query's
// fields, what was sent, and the moves of its life.
type ManagedJob struct {
	Job
	AccountID      int64      `json:"accountId"`
	Platform       string     `json:"platform"`
	TargetType     string     `json:"targetType"`
	Content        string     `json:"content"`
	ImageURL       string     `json:"imageUrl,omitempty"`
	IdempotencyKey string     `json:"idempotencyKey,omitempty"`
	Cost           int64      `json:"cost"`
	History        []JobEvent `json:"history"`
}

// JobEvent is one move of a job's life.
type JobEvent struct {
	State State     `json:"state"`
	At    time.Time `json:"at"`
	By    string    `json:"by,omitempty"`
	Note  string    `json:"note,omitempty"`
}

// UnmarshalJSON decodes a managed job: the job (with its Outcome) and the
// management API's fields.
func (j *ManagedJob) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &j.Job); err != nil {
		return err
	}
	var extra struct {
		AccountID      int64      `json:"accountId"`
		Platform       string     `json:"platform"`
		TargetType     string     `json:"targetType"`
		Content        string     `json:"content"`
		ImageURL       string     `json:"imageUrl"`
		IdempotencyKey string     `json:"idempotencyKey"`
		Cost           int64      `json:"cost"`
		History        []JobEvent `json:"history"`
	}
	if err := json.Unmarshal(data, &extra); err != nil {
		return err
	}
	j.AccountID, j.Platform, j.TargetType, j.Content, j.ImageURL = extra.AccountID, extra.Platform, extra.TargetType, extra.Content, extra.ImageURL
	j.IdempotencyKey, j.Cost, j.History = extra.IdempotencyKey, extra.Cost, extra.History
	return nil
}

// JobFilter chooses jobs to list; zero fields do not narrow the list.
type JobFilter struct {
	// AccountID is the account (0: the caller's own; an operator's: every
	// account's).
	AccountID int64
	State     State
	BotID     int64
	TargetID  int64
	// Since and Until bound the time the jobs were made: at or after
	// Since, before Until.
	Since time.Time
	Until time.Time
	// Key is the Idempotency-Key of the send whose jobs are listed.
	Key string
	ListOptions
}

// JobService is the jobs of the management API.
type JobService struct{ c *Client }

// Jobs returns the jobs of the management API.
func (c *Client) Jobs() JobService { return JobService{c} }

// List returns a page of jobs.
func (s JobService) List(ctx context.Context, f JobFilter) (Page[ManagedJob], error) {
	q := url.Values{}
	setID(q, "account", f.AccountID)
	setID(q, "bot", f.BotID)
	setID(q, "target", f.TargetID)
	if f.State != "" {
		q.Set("state", string(f.State))
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339))
	}
	if f.Key != "" {
		q.Set("key", f.Key)
	}
	return list[ManagedJob](ctx, s.c, managePrefix+"/jobs", q, f.ListOptions)
}

// Get returns a job with its history.
func (s JobService) Get(ctx context.Context, id string) (ManagedJob, error) {
	return read[ManagedJob](ctx, s.c, managePrefix+"/jobs/"+url.PathEscape(id), nil)
}

// Cancel cancels a queued job and returns its points; a job that started
// is refused with ReasonJobNotQueued.
func (s JobService) Cancel(ctx context.Context, id string) (ManagedJob, error) {
	return write[ManagedJob](ctx, s.c, http.MethodPost, managePrefix+"/jobs/"+url.PathEscape(id)+"/cancel", nil)
}

// Resolve settles an uncertain job as StateSucceeded or StateFailed once
// the platform was checked, with a note of what was checked.
func (s JobService) Resolve(ctx context.Context, id string, outcome State, note string) (ManagedJob, error) {
	return write[ManagedJob](ctx, s.c, http.MethodPost, managePrefix+"/jobs/"+url.PathEscape(id)+"/resolve",
		map[string]string{"outcome": string(outcome), "note": note})
}
