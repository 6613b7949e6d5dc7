package transport

import (
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
)

// messageView is the message record of a single send (section 2 of the
// contract), with the job's id and state flags.
type messageView struct {
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

// recordStatus is a message record's status: SUCCESS for a delivered
// message, else the job state in capitals.
func recordStatus(s push.State) string {
	if s == push.StateSucceeded {
		return "SUCCESS"
	}
	return strings.ToUpper(string(s))
}

func messageRecord(j push.Job) messageView {
	return messageView{
		ID:            j.MessageID,
		Bot:           j.BotID,
		User:          j.AccountID,
		Content:       j.Message.Content,
		MsgType:       int(j.Message.Type),
		Status:        recordStatus(j.State),
		PlatformIndex: j.PlatformIndex,
		JobID:         j.ID,
		Pending:       j.State.Pending(),
		Uncertain:     j.State == push.StateUncertain,
		Error:         j.Error,
	}
}

// JobView is a job as the job query returns it: the fields of section 2 of
// the contract, with details. The admin command prints the same shape.
type JobView struct {
	JobID         string     `json:"jobId"`
	Status        string     `json:"status"`
	Success       *bool      `json:"success"`
	Pending       bool       `json:"pending"`
	Uncertain     bool       `json:"uncertain"`
	MessageID     int64      `json:"messageId"`
	BotID         int64      `json:"botId"`
	TargetID      *int64     `json:"targetId"`
	MsgType       int        `json:"msgType"`
	PlatformIndex string     `json:"platformIndex"`
	Error         string     `json:"error,omitempty"`
	Attempts      int        `json:"attempts"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
	// ResolvedAt, ResolvedBy and Note are set on an uncertain job
	// resolved by a person or a check (an extension of the contract).
	ResolvedAt *time.Time `json:"resolvedAt,omitempty"`
	ResolvedBy string     `json:"resolvedBy,omitempty"`
	Note       string     `json:"note,omitempty"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// NewJobView returns the view of a job.
func NewJobView(j push.Job) JobView {
	v := JobView{
		JobID:         j.ID,
		Status:        string(j.State),
		Success:       j.Success(),
		Pending:       j.State.Pending(),
		Uncertain:     j.State == push.StateUncertain,
		MessageID:     j.MessageID,
		BotID:         j.BotID,
		MsgType:       int(j.Message.Type),
		PlatformIndex: j.PlatformIndex,
		Error:         j.Error,
		Attempts:      j.Attempts,
		CreatedAt:     j.CreatedAt.UTC(),
		UpdatedAt:     j.UpdatedAt.UTC(),
		StartedAt:     optTime(j.StartedAt),
		FinishedAt:    optTime(j.FinishedAt),
		ResolvedAt:    optTime(j.ResolvedAt),
		ResolvedBy:    j.ResolvedBy,
		Note:          j.Note,
	}
	if j.TargetID != 0 {
		id := j.TargetID
		v.TargetID = &id
	}
	return v
}
