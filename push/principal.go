package push

import "strconv"

// Role is what a principal may do beyond its own account.
type Role string

// Roles. A member acts within its own account; an operator runs the
// service and acts on every account.
const (
	RoleMember   Role = "member"
	RoleOperator Role = "operator"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleMember || r == RoleOperator }

// Principal is who acts: the caller behind an API key, or the process
// itself (System). Every verb of the engine's services takes the acting
// principal and decides itself what the principal may see and change, so
// that no front end (HTTP, console, herald admin) holds a rule of its own.
type Principal struct {
	// AccountID is the account the principal acts in; 0 for System.
	AccountID int64
	// KeyID is the API key the principal authenticated with, if any.
	KeyID int64
	// UserID and SessionID are the signed-in user and the session, if
	// the principal authenticated with a session; Email is the user's.
	UserID    int64
	SessionID int64
	Email     string
	// Role is RoleMember for an account's members and keys; RoleOperator
	// may act on every account.
	Role Role
	// Address is where the request came from (an IP address), for the
	// audit trail; the front end sets it.
	Address string
}

// System returns the principal of the process itself: herald admin on the
// server's shell, or a Go program that embeds the engine. It is an
// operator not bound to an account: it may do everything, and its sends
// are made in the account of the bot they name.
func System() Principal { return Principal{Role: RoleOperator} }

// AccountPrincipal returns a member principal of the account, for a Go
// program that embeds the engine and acts for one of its accounts.
func AccountPrincipal(accountID int64) Principal {
	return Principal{AccountID: accountID, Role: RoleMember}
}

// actor names the principal in the audit trail: the user (by id and
// email), the key (by id), or the system.
func (p Principal) actor() string {
	switch {
	case p.UserID != 0:
		return "user " + strconv.FormatInt(p.UserID, 10) + " (" + p.Email + ")"
	case p.KeyID != 0:
		return "key " + strconv.FormatInt(p.KeyID, 10)
	case p.AccountID != 0:
		return "account " + strconv.FormatInt(p.AccountID, 10)
	}
	return "system"
}

// Operator reports whether p may act on every account.
func (p Principal) Operator() bool { return p.Role == RoleOperator }

// sees reports whether p may see and act on what belongs to the account.
func (p Principal) sees(accountID int64) bool {
	return p.Operator() || p.AccountID != 0 && p.AccountID == accountID
}

// listAccount is the account a list of the principal covers: the one the
// filter names (0: every account, for an operator), or a member's own; a
// member naming another account finds nothing.
func (p Principal) listAccount(named int64) (int64, error) {
	switch {
	case p.Operator():
		return named, nil
	case named == 0 || named == p.AccountID:
		return p.AccountID, nil
	}
	return 0, accountNotFound(named)
}

// needOperator refuses a principal that is not an operator.
func (p Principal) needOperator(what string) error {
	if p.Operator() {
		return nil
	}
	return Errorf(Forbidden, "operator_only", "only an operator may %s", what)
}
