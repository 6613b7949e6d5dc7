package push

import (
	"context"
	"time"
)

// AuditEntry is one change made through the engine's management verbs:
// who made it, in which account, what it did to which object, when and
// from where. It never holds a secret.
type AuditEntry struct {
	ID          int64
	AccountID   int64  // the account of the object; 0 for the service's
	Actor       string // "user 3 (ada@example.com)", "key 7" or "system"
	ActorUserID int64
	ActorKeyID  int64
	Action      string // e.g. "bot.update", "key.revoke", "session.create"
	Object      string // e.g. "bot 5 (alerts)"
	Address     string
	At          time.Time
}

// AuditFilter selects audit entries for List: an account's (0: all),
// newest first, at most Limit, after Cursor.
type AuditFilter struct {
	AccountID int64
	Limit     int
	Cursor    string
}

// AuditService holds the verbs on the audit trail. Get it from
// Engine.Audit.
type AuditService struct{ e *Engine }

// Audit returns the verbs on the audit trail.
func (e *Engine) Audit() *AuditService { return &e.audit }

// List lists audit entries, newest first. Only an operator may.
func (s *AuditService) List(ctx context.Context, p Principal, f AuditFilter) (Page[AuditEntry], error) {
	if err := p.needOperator("read the audit trail"); err != nil {
		return Page[AuditEntry]{}, err
	}
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[AuditEntry]{}, err
	}
	f.Limit = limit + 1
	es, err := s.e.store.AuditLog(ctx, f)
	if err != nil {
		return Page[AuditEntry]{}, err
	}
	return pageOf(es, limit, func(a AuditEntry) int64 { return a.ID }), nil
}

// audited runs fn in one transaction with the audit entry of the change:
// accountID is the account of the object, object names it (fn may return
// the name when only fn knows it, such as a new row's id). The jobs fn
// settles through ev are reported once the transaction commits.
func (e *Engine) audited(ctx context.Context, p Principal, accountID int64, action, object string, fn func(ctx context.Context, tx Tx, ev *txEvents) (string, error)) error {
	return e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		obj, err := fn(ctx, tx, ev)
		if err != nil {
			return err
		}
		if obj == "" {
			obj = object
		}
		return tx.CreateAudit(ctx, &AuditEntry{
			AccountID: accountID, Actor: p.actor(), ActorUserID: p.UserID, ActorKeyID: p.KeyID,
			Action: action, Object: truncate(obj, 300), Address: truncate(p.Address, 64), At: e.clock.Now(),
		})
	})
}
