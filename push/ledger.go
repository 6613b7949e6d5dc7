package push

import (
	"context"
	"strconv"
	"time"
)

// LedgerKind names a row of the points ledger.
type LedgerKind string

// Ledger row kinds. A job has at most one charge and at most one refund.
const (
	LedgerCharge LedgerKind = "charge"
	LedgerRefund LedgerKind = "refund"
	LedgerAdjust LedgerKind = "adjust" // an operator set the balance
)

// LedgerEntry is one movement of an account's points. Amount is positive
// for refunds and negative for charges; for adjustments it is the
// difference the operator made.
type LedgerEntry struct {
	ID        int64
	AccountID int64
	JobID     string // empty for adjustments
	Kind      LedgerKind
	Amount    int64
	At        time.Time
}

// LedgerFilter selects an account's ledger entries for List: newest first,
// at most Limit, after Cursor.
type LedgerFilter struct {
	AccountID int64
	Limit     int
	Cursor    string
}

// LedgerService holds the verbs on points: balances and their ledger. Get
// it from Engine.Ledger.
type LedgerService struct{ e *Engine }

// Ledger returns the verbs on points.
func (e *Engine) Ledger() *LedgerService { return &e.ledger }

// List lists an account's points movements, newest first. A member sees
// its own account's only.
func (s *LedgerService) List(ctx context.Context, p Principal, f LedgerFilter) (Page[LedgerEntry], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	if !p.sees(f.AccountID) {
		return Page[LedgerEntry]{}, accountNotFound(f.AccountID)
	}
	if _, err := s.e.store.Account(ctx, f.AccountID); err != nil {
		return Page[LedgerEntry]{}, err
	}
	f.Limit = limit + 1
	es, err := s.e.store.Ledger(ctx, f)
	if err != nil {
		return Page[LedgerEntry]{}, err
	}
	return pageOf(es, limit, func(e LedgerEntry) int64 { return e.ID }), nil
}

// SetBalance sets an account's balance; the difference is recorded in the
// ledger. Only an operator may.
func (s *LedgerService) SetBalance(ctx context.Context, p Principal, accountID int64, balance int64) (Account, error) {
	if err := p.needOperator("change balances"); err != nil {
		return Account{}, err
	}
	if balance < 0 {
		return Account{}, Errorf(Invalid, "invalid_balance", "a balance cannot be negative (got %d)", balance).with(strconv.FormatInt(balance, 10), 0)
	}
	if err := s.e.store.SetPoints(ctx, accountID, balance, s.e.clock.Now()); err != nil {
		return Account{}, err
	}
	return s.e.store.Account(ctx, accountID)
}
