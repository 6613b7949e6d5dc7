package push

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// LedgerKind names a row of the points ledger.
type LedgerKind string

// Ledger row kinds. A job has at most one charge and at most one refund;
// an account has at most one initial grant.
const (
	LedgerCharge  LedgerKind = "charge"
	LedgerRefund  LedgerKind = "refund"
	LedgerAdjust  LedgerKind = "adjust"  // an operator set the balance
	LedgerInitial LedgerKind = "initial" // the initial points, at creation or first sign-in
	LedgerGrant   LedgerKind = "grant"   // an operator granted or deducted points, with a reason
	// LedgerSummary is the sum of the charges and refunds of one month's
	// jobs, written when the jobs were deleted after the job retention
	// (Limits.JobRetention); At is the first instant of the month (UTC).
	LedgerSummary LedgerKind = "summary"
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
	Note      string // why: the reason of a grant, what an initial row is
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
	for i, e := range es {
		if e.Kind == LedgerSummary {
			es[i].Note = "the charges and refunds of the jobs of " + e.At.UTC().Format("2006-01") + ", summed when the jobs were deleted after the job retention"
		}
	}
	return pageOf(es, limit, func(e LedgerEntry) int64 { return e.ID }), nil
}

// MaxNote bounds the reason of a grant and the note of a resolved job.
const MaxNote = 500

// Grant adds amount points to an account (a negative amount deducts
// them), with a reason recorded in the ledger. A deduction never takes the
// balance below zero. Only an operator may.
func (s *LedgerService) Grant(ctx context.Context, p Principal, accountID, amount int64, reason string) (Account, error) {
	e := s.e
	if err := p.needOperator("grant or deduct points"); err != nil {
		return Account{}, err
	}
	if amount == 0 {
		return Account{}, Errorf(Invalid, "invalid_amount", "the amount is 0: give a positive number to grant points, a negative one to deduct them")
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxNote || !utf8.ValidString(reason) {
		return Account{}, Errorf(Invalid, "invalid_reason", "give the reason of the change: 1 to %d characters, kept in the ledger", MaxNote)
	}
	verb := "grant"
	if amount < 0 {
		verb = "deduct"
	}
	err := e.audited(ctx, p, accountID, "points."+verb, "account "+i64(accountID)+": "+strconv.FormatInt(amount, 10)+" points", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		return "", tx.Grant(ctx, LedgerEntry{AccountID: accountID, Kind: LedgerGrant, Amount: amount, At: e.clock.Now(), Note: reason})
	})
	if err != nil {
		return Account{}, err
	}
	return e.store.Account(ctx, accountID)
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
