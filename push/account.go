package push

import "time"

// AccountStatus is the standing of an account. Only an active account may
// call the API.
type AccountStatus string

// Account states.
const (
	AccountActive    AccountStatus = "active"
	AccountSuspended AccountStatus = "suspended"
)

// Account owns API keys and bots and holds a points balance.
type Account struct {
	ID        int64
	Name      string
	Points    int64
	Status    AccountStatus
	CreatedAt time.Time
}

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
	AccountID int64
	JobID     string // empty for adjustments
	Kind      LedgerKind
	Amount    int64
	At        time.Time
}
