package transport

import (
	"time"

	"github.com/heraldpush/herald/push"
)

// The management API's answers. No view has a field for a secret: a key's
// hash, a bot's config, a password's hash or a session's token never leave
// the engine (a new key or invite code is answered once, by the request
// that made it).

type accountView struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	Points    int64     `json:"points"`
	CreatedAt time.Time `json:"createdAt"`
}

func newAccountView(a push.Account) accountView {
	return accountView{ID: a.ID, Name: a.Name, Status: string(a.Status), Points: a.Points, CreatedAt: a.CreatedAt.UTC()}
}

type userView struct {
	ID                int64      `json:"id"`
	AccountID         int64      `json:"accountId"`
	Email             string     `json:"email"`
	Role              string     `json:"role"`
	CreatedAt         time.Time  `json:"createdAt"`
	PasswordChangedAt time.Time  `json:"passwordChangedAt"`
	SignedInAt        *time.Time `json:"signedInAt"`
}

func newUserView(u push.User) userView {
	return userView{ID: u.ID, AccountID: u.AccountID, Email: u.Email, Role: string(u.Role), CreatedAt: u.CreatedAt.UTC(),
		PasswordChangedAt: u.PasswordChangedAt.UTC(), SignedInAt: optTime(u.SignedInAt)}
}

type sessionView struct {
	ID        int64      `json:"id"`
	Current   bool       `json:"current"`
	CreatedAt time.Time  `json:"createdAt"`
	SeenAt    time.Time  `json:"seenAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt"`
	Address   string     `json:"address"`
	Agent     string     `json:"agent"`
}

func newSessionView(s push.Session, current int64) sessionView {
	return sessionView{ID: s.ID, Current: s.ID == current, CreatedAt: s.CreatedAt.UTC(), SeenAt: s.SeenAt.UTC(),
		ExpiresAt: s.ExpiresAt.UTC(), RevokedAt: optTime(s.RevokedAt), Address: s.Address, Agent: s.Agent}
}

type keyView struct {
	ID        int64      `json:"id"`
	AccountID int64      `json:"accountId"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	Hint      string     `json:"hint"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

func newKeyView(k push.APIKey) keyView {
	role := k.Role
	if role == "" {
		role = push.RoleMember
	}
	return keyView{ID: k.ID, AccountID: k.AccountID, Name: k.Name, Role: string(role), Prefix: k.Prefix, Hint: k.Hint,
		CreatedAt: k.CreatedAt.UTC(), ExpiresAt: optTime(k.ExpiresAt), RevokedAt: optTime(k.RevokedAt)}
}

type inviteView struct {
	ID        int64      `json:"id"`
	AccountID *int64     `json:"accountId"`
	Role      string     `json:"role"`
	Email     string     `json:"email"`
	Hint      string     `json:"hint"`
	CreatedBy string     `json:"createdBy"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	UsedAt    *time.Time `json:"usedAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

func newInviteView(i push.Invite) inviteView {
	v := inviteView{ID: i.ID, Role: string(i.Role), Email: i.Email, Hint: i.Hint, CreatedBy: i.CreatedBy,
		CreatedAt: i.CreatedAt.UTC(), ExpiresAt: i.ExpiresAt.UTC(), UsedAt: optTime(i.UsedAt), RevokedAt: optTime(i.RevokedAt)}
	if i.AccountID != 0 {
		id := i.AccountID
		v.AccountID = &id
	}
	return v
}

type botView struct {
	ID        int64      `json:"id"`
	AccountID int64      `json:"accountId"`
	Platform  string     `json:"platform"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
}

func newBotView(b push.Bot) botView {
	return botView{ID: b.ID, AccountID: b.AccountID, Platform: b.Platform, Name: b.Name, CreatedAt: b.CreatedAt.UTC(), UpdatedAt: optTime(b.UpdatedAt)}
}

type targetView struct {
	ID           int64      `json:"id"`
	BotID        int64      `json:"botId"`
	Type         string     `json:"type"`
	Address      string     `json:"address"`
	Name         string     `json:"name"`
	CreatedAt    time.Time  `json:"createdAt"`
	Presence     string     `json:"presence"`
	PresenceAt   *time.Time `json:"presenceAt"`
	PresenceNote string     `json:"presenceNote"`
}

func newTargetView(t push.Target) targetView {
	p := t.Presence
	if p == "" {
		p = push.PresenceActive
	}
	return targetView{ID: t.ID, BotID: t.BotID, Type: string(t.Type), Address: t.Address, Name: t.Name, CreatedAt: t.CreatedAt.UTC(),
		Presence: string(p), PresenceAt: optTime(t.PresenceAt), PresenceNote: t.PresenceNote}
}

type bindCodeView struct {
	ID        int64      `json:"id"`
	BotID     int64      `json:"botId"`
	Hint      string     `json:"hint"`
	Type      string     `json:"type"`
	UsesLeft  int        `json:"usesLeft"`
	CreatedBy string     `json:"createdBy"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt"`
	LastBound *int64     `json:"lastTargetId"`
}

func newBindCodeView(c push.BindCode) bindCodeView {
	v := bindCodeView{ID: c.ID, BotID: c.BotID, Hint: c.Hint, Type: string(c.Type), UsesLeft: c.UsesLeft, CreatedBy: c.CreatedBy,
		CreatedAt: c.CreatedAt.UTC(), ExpiresAt: c.ExpiresAt.UTC(), RevokedAt: optTime(c.RevokedAt)}
	if c.LastTargetID != 0 {
		id := c.LastTargetID
		v.LastBound = &id
	}
	return v
}

type receiverView struct {
	Mode        string     `json:"mode"`
	Running     bool       `json:"running"`
	Failures    int        `json:"failures"`
	Error       string     `json:"error"`
	FailedAt    *time.Time `json:"failedAt"`
	LastEventAt *time.Time `json:"lastEventAt"`
	WebhookPath string     `json:"webhookPath"`
	Targets     int        `json:"targets"`
	Gone        int        `json:"gone"`
	Reachable   int        `json:"reachable"`
}

func newReceiverView(s push.ReceiverStatus) receiverView {
	mode := string(s.Mode)
	if mode == "" {
		mode = "none"
	}
	return receiverView{Mode: mode, Running: s.Running, Failures: s.Failures, Error: s.Error, FailedAt: optTime(s.FailedAt),
		LastEventAt: optTime(s.LastEventAt), WebhookPath: s.WebhookPath, Targets: s.Targets, Gone: s.Gone, Reachable: s.Reachable}
}

// managedJobView is a job as the management API shows it: the job query's
// fields, what was sent, and the moves of its life.
type managedJobView struct {
	JobView
	AccountID      int64          `json:"accountId"`
	Platform       string         `json:"platform"`
	TargetType     string         `json:"targetType"`
	Content        string         `json:"content"`
	ImageURL       string         `json:"imageUrl"`
	IdempotencyKey string         `json:"idempotencyKey"`
	Cost           int64          `json:"cost"`
	ResolvedAt     *time.Time     `json:"resolvedAt"`
	ResolvedBy     string         `json:"resolvedBy"`
	Note           string         `json:"note"`
	History        []jobEventView `json:"history"`
}

type jobEventView struct {
	State string    `json:"state"`
	At    time.Time `json:"at"`
	By    string    `json:"by,omitempty"`
	Note  string    `json:"note,omitempty"`
}

func newManagedJobView(j push.Job) managedJobView {
	v := managedJobView{JobView: NewJobView(j), AccountID: j.AccountID, Platform: j.Platform, TargetType: string(j.TargetType),
		Content: j.Message.Content, ImageURL: j.Message.ImageURL, IdempotencyKey: j.IdempotencyKey, Cost: j.Cost,
		ResolvedAt: optTime(j.ResolvedAt), ResolvedBy: j.ResolvedBy, Note: j.Note}
	for _, e := range j.History() {
		v.History = append(v.History, jobEventView{State: string(e.State), At: e.At.UTC(), By: e.By, Note: e.Note})
	}
	return v
}

type ledgerView struct {
	ID        int64     `json:"id"`
	AccountID int64     `json:"accountId"`
	JobID     *string   `json:"jobId"`
	Kind      string    `json:"kind"`
	Amount    int64     `json:"amount"`
	At        time.Time `json:"at"`
	Note      string    `json:"note"`
}

func newLedgerView(e push.LedgerEntry) ledgerView {
	v := ledgerView{ID: e.ID, AccountID: e.AccountID, Kind: string(e.Kind), Amount: e.Amount, At: e.At.UTC(), Note: e.Note}
	if e.JobID != "" {
		id := e.JobID
		v.JobID = &id
	}
	return v
}

type auditView struct {
	ID        int64     `json:"id"`
	AccountID *int64    `json:"accountId"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Object    string    `json:"object"`
	Address   string    `json:"address"`
	At        time.Time `json:"at"`
}

func newAuditView(a push.AuditEntry) auditView {
	v := auditView{ID: a.ID, Actor: a.Actor, Action: a.Action, Object: a.Object, Address: a.Address, At: a.At.UTC()}
	if a.AccountID != 0 {
		id := a.AccountID
		v.AccountID = &id
	}
	return v
}
