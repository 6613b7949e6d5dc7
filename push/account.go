package push

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// AccountStatus is the standing of an account. Only an active account may
// call the API.
type AccountStatus string

// Account states.
const (
	AccountActive    AccountStatus = "active"
	AccountSuspended AccountStatus = "suspended"
)

// Valid reports whether s is a known status.
func (s AccountStatus) Valid() bool { return s == AccountActive || s == AccountSuspended }

// Account owns API keys and bots and holds a points balance.
type Account struct {
	ID        int64
	Name      string
	Points    int64
	Status    AccountStatus
	CreatedAt time.Time
}

// AccountFilter selects accounts for List: newest first, at most Limit
// (see Page), after Cursor.
type AccountFilter struct {
	Limit  int
	Cursor string
}

// AccountUpdate changes an account; nil fields stay as they are.
type AccountUpdate struct {
	// Status suspends or activates the account (operators only). A
	// suspended account's keys and sessions are refused with Forbidden at
	// once, on every node.
	Status *AccountStatus
	// Name renames the account.
	Name *string
}

// AccountService holds the verbs on accounts. Get it from Engine.Accounts.
type AccountService struct{ e *Engine }

// Accounts returns the verbs on accounts.
func (e *Engine) Accounts() *AccountService { return &e.accounts }

// MaxName bounds the names of accounts, bots and targets, in characters.
const MaxName = 200

func validateName(what, name string) error {
	if strings.TrimSpace(name) == "" {
		return fieldErrorf(FieldName, "invalid_name", "the %s name is empty: give a name", what)
	}
	if utf8.RuneCountInString(name) > MaxName || !utf8.ValidString(name) {
		return fieldErrorf(FieldName, "invalid_name", "the %s name must be valid UTF-8 of at most %d characters", what, MaxName).with("", MaxName)
	}
	return nil
}

// Create creates an active account with the initial points balance,
// recorded in the ledger (an account made this way is for API use: it
// does not wait for a first sign-in). Only an operator may.
func (s *AccountService) Create(ctx context.Context, p Principal, name string) (Account, error) {
	e := s.e
	if err := p.needOperator("create accounts"); err != nil {
		return Account{}, err
	}
	if err := validateName("account", name); err != nil {
		return Account{}, err
	}
	var a Account
	err := e.audited(ctx, p, 0, "account.create", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		a = Account{Name: name, Status: AccountActive, CreatedAt: e.clock.Now()}
		if err := tx.CreateAccount(ctx, &a); err != nil {
			return "", err
		}
		if e.points.Initial > 0 {
			if _, err := tx.GrantInitial(ctx, LedgerEntry{AccountID: a.ID, Kind: LedgerInitial, Amount: e.points.Initial, At: a.CreatedAt, Note: "initial points, at the account's creation"}); err != nil {
				return "", err
			}
			a.Points = e.points.Initial
		}
		return "account " + i64(a.ID) + " (" + a.Name + ")", nil
	})
	if err != nil {
		return Account{}, err
	}
	return a, nil
}

// Get returns an account: an operator's choice, or the principal's own.
// Another account is NotFound, as if it did not exist.
func (s *AccountService) Get(ctx context.Context, p Principal, id int64) (Account, error) {
	if !p.sees(id) {
		return Account{}, accountNotFound(id)
	}
	return s.e.store.Account(ctx, id)
}

// List lists the accounts an operator sees (all of them), or the
// principal's own.
func (s *AccountService) List(ctx context.Context, p Principal, f AccountFilter) (Page[Account], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[Account]{}, err
	}
	if !p.Operator() {
		a, err := s.e.store.Account(ctx, p.AccountID)
		if err != nil || f.Cursor != "" {
			return Page[Account]{Items: []Account{}}, ignoreNotFound(err)
		}
		return Page[Account]{Items: []Account{a}}, nil
	}
	f.Limit = limit + 1
	as, err := s.e.store.Accounts(ctx, f)
	if err != nil {
		return Page[Account]{}, err
	}
	return pageOf(as, limit, func(a Account) int64 { return a.ID }), nil
}

// Update changes an account: an operator its status and name, a member
// its own account's name.
func (s *AccountService) Update(ctx context.Context, p Principal, id int64, u AccountUpdate) (Account, error) {
	e := s.e
	if !p.sees(id) {
		return Account{}, accountNotFound(id)
	}
	if u.Status != nil {
		if err := p.needOperator("suspend or activate accounts"); err != nil {
			return Account{}, err
		}
		if !u.Status.Valid() {
			return Account{}, Errorf(Invalid, "invalid_status", "account status %q is not known: use active or suspended", truncate(string(*u.Status), 40))
		}
	}
	if u.Name != nil {
		if err := validateName("account", *u.Name); err != nil {
			return Account{}, err
		}
	}
	err := e.audited(ctx, p, id, "account.update", "account "+i64(id), func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if u.Status != nil {
			if err := tx.SetAccountStatus(ctx, id, *u.Status); err != nil {
				return "", err
			}
		}
		if u.Name != nil {
			if err := tx.RenameAccount(ctx, id, *u.Name); err != nil {
				return "", err
			}
		}
		obj := "account " + i64(id)
		if u.Status != nil {
			obj += ": " + string(*u.Status)
		}
		return obj, nil
	})
	if u.Status != nil {
		e.forgetAuth()
	}
	if err != nil {
		return Account{}, err
	}
	return e.store.Account(ctx, id)
}

func accountNotFound(id int64) error {
	return Errorf(NotFound, "account_not_found", "account %d does not exist", id)
}

// ignoreNotFound drops a NotFound error.
func ignoreNotFound(err error) error {
	if IsKind(err, NotFound) {
		return nil
	}
	return err
}
