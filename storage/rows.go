package storage

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

// Times are stored as Unix milliseconds, so that every database compares
// and orders them the same way; 0 stands for "not set".

func toMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMs(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

type accountRow struct {
	bun.BaseModel `bun:"table:accounts"`

	ID        int64 `bun:",pk,autoincrement"`
	Name      string
	Status    string
	Points    int64
	CreatedMs int64
}

func (r accountRow) account() push.Account {
	return push.Account{ID: r.ID, Name: r.Name, Status: push.AccountStatus(r.Status), Points: r.Points, CreatedAt: fromMs(r.CreatedMs)}
}

type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID        int64 `bun:",pk,autoincrement"`
	AccountID int64
	Name      string
	Role      string
	UserID    int64
	Prefix    string
	Hash      string
	Hint      string
	CreatedMs int64
	ExpiresMs int64
	RevokedMs int64
}

func (r apiKeyRow) key() push.APIKey {
	return push.APIKey{
		ID: r.ID, AccountID: r.AccountID, Name: r.Name, Role: push.Role(r.Role), UserID: r.UserID, Prefix: r.Prefix, Hash: r.Hash, Hint: r.Hint,
		CreatedAt: fromMs(r.CreatedMs), ExpiresAt: fromMs(r.ExpiresMs), RevokedAt: fromMs(r.RevokedMs),
	}
}

type botRow struct {
	bun.BaseModel `bun:"table:bots"`

	ID        int64 `bun:",pk,autoincrement"`
	AccountID int64
	Platform  string
	Name      string
	Config    string
	CreatedMs int64
	UpdatedMs int64
	DeletedMs int64
}

func (r botRow) bot() push.Bot {
	return push.Bot{ID: r.ID, AccountID: r.AccountID, Platform: r.Platform, Name: r.Name, Config: json.RawMessage(r.Config),
		CreatedAt: fromMs(r.CreatedMs), UpdatedAt: fromMs(r.UpdatedMs)}
}

type targetRow struct {
	bun.BaseModel `bun:"table:targets"`

	ID           int64 `bun:",pk,autoincrement"`
	BotID        int64
	Type         string
	Address      string
	Name         string
	CreatedMs    int64
	UnboundMs    int64
	Presence     string
	PresenceMs   int64
	PresenceNote string
}

func (r targetRow) target() push.Target {
	p := push.Presence(r.Presence)
	if p == "" {
		p = push.PresenceActive
	}
	return push.Target{ID: r.ID, BotID: r.BotID, Type: push.TargetType(r.Type), Address: r.Address, Name: r.Name, CreatedAt: fromMs(r.CreatedMs),
		Presence: p, PresenceAt: fromMs(r.PresenceMs), PresenceNote: r.PresenceNote}
}

type jobRow struct {
	bun.BaseModel `bun:"table:jobs"`

	Seq           int64 `bun:",pk,autoincrement"`
	ID            string
	AccountID     int64
	BotID         int64
	TargetID      int64
	Platform      string
	TargetType    string
	MsgType       int
	Content       string
	ImageURL      string `bun:"image_url"`
	Wakeup        bool
	State         string
	Cost          int64
	Attempts      int
	Error         string
	PlatformIndex string
	IdemKey       string
	CreatedMs     int64
	UpdatedMs     int64
	StartedMs     int64
	FinishedMs    int64
	ExpiresMs     int64
	ResolvedMs    int64
	ResolvedBy    string
	Note          string
	RetryMs       int64
}

func jobToRow(j *push.Job) jobRow {
	return jobRow{
		Seq: j.MessageID, ID: j.ID, AccountID: j.AccountID, BotID: j.BotID, TargetID: j.TargetID,
		Platform: j.Platform, TargetType: string(j.TargetType),
		MsgType: int(j.Message.Type), Content: j.Message.Content, ImageURL: j.Message.ImageURL, Wakeup: j.Message.Wakeup,
		State: string(j.State), Cost: j.Cost, Attempts: j.Attempts, Error: j.Error, PlatformIndex: j.PlatformIndex,
		IdemKey: j.IdempotencyKey, CreatedMs: toMs(j.CreatedAt), UpdatedMs: toMs(j.UpdatedAt),
		StartedMs: toMs(j.StartedAt), FinishedMs: toMs(j.FinishedAt), ExpiresMs: toMs(j.ExpiresAt),
	}
}

func (r jobRow) job() push.Job {
	return push.Job{
		ID: r.ID, MessageID: r.Seq, AccountID: r.AccountID, BotID: r.BotID, TargetID: r.TargetID,
		Platform: r.Platform, TargetType: push.TargetType(r.TargetType),
		Message: push.Message{Type: push.MsgType(r.MsgType), Content: r.Content, ImageURL: r.ImageURL, Wakeup: r.Wakeup},
		State:   push.State(r.State), Cost: r.Cost, Attempts: r.Attempts, Error: r.Error, PlatformIndex: r.PlatformIndex,
		IdempotencyKey: r.IdemKey, CreatedAt: fromMs(r.CreatedMs), UpdatedAt: fromMs(r.UpdatedMs),
		StartedAt: fromMs(r.StartedMs), FinishedAt: fromMs(r.FinishedMs), ExpiresAt: fromMs(r.ExpiresMs),
		ResolvedAt: fromMs(r.ResolvedMs), ResolvedBy: r.ResolvedBy, Note: r.Note, RetryAt: fromMs(r.RetryMs),
	}
}

type idempotencyRow struct {
	bun.BaseModel `bun:"table:idempotency"`

	AccountID   int64  `bun:",pk"`
	IdemKey     string `bun:",pk"`
	Kind        string
	Fingerprint string
	JobIDs      string `bun:"job_ids"`
	CreatedMs   int64
}

// idempotencyToRow is record's inverse.
func idempotencyToRow(r *push.IdempotencyRecord) idempotencyRow {
	return idempotencyRow{AccountID: r.AccountID, IdemKey: r.Key, Kind: string(r.Kind), Fingerprint: r.Fingerprint,
		JobIDs: strings.Join(r.JobIDs, ","), CreatedMs: toMs(r.CreatedAt)}
}

func (r idempotencyRow) record() push.IdempotencyRecord {
	return push.IdempotencyRecord{
		AccountID: r.AccountID, Key: r.IdemKey, Kind: push.RequestKind(r.Kind), Fingerprint: r.Fingerprint,
		JobIDs: strings.Split(r.JobIDs, ","), CreatedAt: fromMs(r.CreatedMs),
	}
}

type ledgerRow struct {
	bun.BaseModel `bun:"table:points_ledger"`

	ID        int64 `bun:",pk,autoincrement"`
	AccountID int64
	JobID     *string
	Kind      string
	Amount    int64
	CreatedMs int64
	Note      string
}

func ledgerToRow(e push.LedgerEntry) ledgerRow {
	r := ledgerRow{AccountID: e.AccountID, Kind: string(e.Kind), Amount: e.Amount, CreatedMs: toMs(e.At), Note: e.Note}
	if e.JobID != "" {
		id := e.JobID
		r.JobID = &id
	}
	return r
}

func (r ledgerRow) entry() push.LedgerEntry {
	e := push.LedgerEntry{ID: r.ID, AccountID: r.AccountID, Kind: push.LedgerKind(r.Kind), Amount: r.Amount, At: fromMs(r.CreatedMs), Note: r.Note}
	if r.JobID != nil {
		e.JobID = *r.JobID
	}
	return e
}

type backlogRow struct {
	bun.BaseModel `bun:"table:backlog"`

	BotID  int64 `bun:",pk"`
	N      int64
	Closed bool
}

type userRow struct {
	bun.BaseModel `bun:"table:users"`

	ID         int64 `bun:",pk,autoincrement"`
	AccountID  int64
	Email      string
	Password   string
	Role       string
	CreatedMs  int64
	PasswordMs int64
	SigninMs   int64 `bun:"signin_ms"`
}

func (r userRow) user() push.User {
	return push.User{ID: r.ID, AccountID: r.AccountID, Email: r.Email, PasswordHash: r.Password, Role: push.Role(r.Role),
		CreatedAt: fromMs(r.CreatedMs), PasswordChangedAt: fromMs(r.PasswordMs), SignedInAt: fromMs(r.SigninMs)}
}

type sessionRow struct {
	bun.BaseModel `bun:"table:sessions"`

	ID        int64 `bun:",pk,autoincrement"`
	UserID    int64
	AccountID int64
	TokenHash string
	CreatedMs int64
	SeenMs    int64
	ExpiresMs int64
	RevokedMs int64
	Address   string
	Agent     string
}

func (r sessionRow) session() push.Session {
	return push.Session{ID: r.ID, UserID: r.UserID, AccountID: r.AccountID, TokenHash: r.TokenHash, CreatedAt: fromMs(r.CreatedMs),
		SeenAt: fromMs(r.SeenMs), ExpiresAt: fromMs(r.ExpiresMs), RevokedAt: fromMs(r.RevokedMs), Address: r.Address, Agent: r.Agent}
}

type inviteRow struct {
	bun.BaseModel `bun:"table:invites"`

	ID        int64 `bun:",pk,autoincrement"`
	CodeHash  string
	Hint      string
	AccountID int64
	Role      string
	Email     string
	CreatedBy string
	CreatedMs int64
	ExpiresMs int64
	UsedMs    int64
	UsedBy    int64
	RevokedMs int64
}

func (r inviteRow) invite() push.Invite {
	return push.Invite{ID: r.ID, CodeHash: r.CodeHash, Hint: r.Hint, AccountID: r.AccountID, Role: push.Role(r.Role), Email: r.Email,
		CreatedBy: r.CreatedBy, CreatedAt: fromMs(r.CreatedMs), ExpiresAt: fromMs(r.ExpiresMs), UsedAt: fromMs(r.UsedMs), UsedBy: r.UsedBy,
		RevokedAt: fromMs(r.RevokedMs)}
}

type auditRow struct {
	bun.BaseModel `bun:"table:audit"`

	ID        int64 `bun:",pk,autoincrement"`
	AccountID int64
	Actor     string
	ActorUser int64
	ActorKey  int64
	Action    string
	Object    string
	Detail    string
	Address   string
	CreatedMs int64
}

func (r auditRow) entry() push.AuditEntry {
	return push.AuditEntry{ID: r.ID, AccountID: r.AccountID, Actor: r.Actor, ActorUserID: r.ActorUser, ActorKeyID: r.ActorKey,
		Action: r.Action, Object: r.Object, Address: r.Address, At: fromMs(r.CreatedMs)}
}

type bindCodeRow struct {
	bun.BaseModel `bun:"table:bind_codes"`

	ID         int64 `bun:",pk,autoincrement"`
	BotID      int64
	AccountID  int64
	CodeHash   string
	Hint       string
	Type       string
	UsesLeft   int
	CreatedBy  string
	CreatedMs  int64
	ExpiresMs  int64
	RevokedMs  int64
	LastTarget int64
}

func (r bindCodeRow) code() push.BindCode {
	return push.BindCode{ID: r.ID, BotID: r.BotID, AccountID: r.AccountID, CodeHash: r.CodeHash, Hint: r.Hint, Type: push.TargetType(r.Type),
		UsesLeft: r.UsesLeft, CreatedBy: r.CreatedBy, CreatedAt: fromMs(r.CreatedMs), ExpiresAt: fromMs(r.ExpiresMs),
		RevokedAt: fromMs(r.RevokedMs), LastTargetID: r.LastTarget}
}

type targetReplyRow struct {
	bun.BaseModel `bun:"table:target_replies"`

	TargetID int64 `bun:",pk"`
	MsgID    string
	MsgMs    int64
	MsgSeq   int
	EventID  string
	EventMs  int64
	EventSeq int
}

func (r targetReplyRow) state() push.ReplyState {
	return push.ReplyState{MessageID: r.MsgID, MessageAt: fromMs(r.MsgMs), MessageSeq: r.MsgSeq,
		EventID: r.EventID, EventAt: fromMs(r.EventMs), EventSeq: r.EventSeq}
}

type jobReplyRow struct {
	bun.BaseModel `bun:"table:job_replies"`

	JobID   string `bun:",pk"`
	MsgID   string
	EventID string
	Seq     int
}

type receiverRow struct {
	bun.BaseModel `bun:"table:receivers"`

	BotID    int64 `bun:",pk"`
	Holder   string
	LeaseMs  int64
	Cursor   string
	Setup    string
	Failures int
	Error    string
	FailedMs int64
	EventMs  int64
}

func (r receiverRow) receiver() push.Receiver {
	return push.Receiver{BotID: r.BotID, Holder: r.Holder, LeaseUntil: fromMs(r.LeaseMs), Cursor: r.Cursor, Setup: r.Setup,
		Failures: r.Failures, Error: r.Error, FailedAt: fromMs(r.FailedMs), EventAt: fromMs(r.EventMs)}
}
