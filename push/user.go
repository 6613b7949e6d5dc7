package push

import (
	"context"
	"strings"
	"time"
)

// User is a person who signs in: a member of one account, or an operator
// of the service. Only a hash of the password is stored.
type User struct {
	ID                int64
	AccountID         int64
	Email             string
	Role              Role
	PasswordHash      string // the PasswordHasher's; never shown
	CreatedAt         time.Time
	PasswordChangedAt time.Time
	SignedInAt        time.Time // the last sign-in; zero: never
}

// UserFilter selects users for List: an account's (0: every account, for
// an operator), newest first, at most Limit, after Cursor.
type UserFilter struct {
	AccountID int64
	Limit     int
	Cursor    string
}

// UserCreate is a new user made directly (by an operator, or herald admin
// to bootstrap the first operator).
type UserCreate struct {
	AccountID int64
	Email     string
	Password  string
	Role      Role // default RoleMember
}

// UserService holds the verbs on users. Get it from Engine.Users.
type UserService struct{ e *Engine }

// Users returns the verbs on users.
func (e *Engine) Users() *UserService { return &e.users }

// MaxEmail bounds an email address in bytes (RFC 5321's path limit).
const MaxEmail = 254

// NormalizeEmail returns an email address as users are found by it
// (trimmed, lower case), or an Invalid error when it does not look like
// one.
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	local, domain, ok := strings.Cut(e, "@")
	bad := !ok || local == "" || domain == "" || strings.Contains(domain, "@") || len(e) > MaxEmail || len(local) > 64 ||
		!strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".")
	for _, c := range e {
		if c <= ' ' || c == 0x7f || c == '<' || c == '>' || c == ',' || c == ';' || c == '"' || c == '\\' {
			bad = true
		}
	}
	if bad {
		v := truncate(email, 80)
		return "", Errorf(Invalid, "invalid_email", "%q is not an email address: give one such as ada@example.com", v)
	}
	return e, nil
}

// hasher returns the engine's password hasher, or refuses when it has
// none.
func (e *Engine) hasher() (PasswordHasher, error) {
	if e.opts.Passwords == nil {
		return nil, Errorf(Unavailable, "users_unavailable", "this server has no password hasher configured: users cannot sign in")
	}
	return e.opts.Passwords, nil
}

// Create makes a user directly. Only an operator may; a member brings
// people into its account with an invite.
func (s *UserService) Create(ctx context.Context, p Principal, c UserCreate) (User, error) {
	e := s.e
	if err := p.needOperator("create users"); err != nil {
		return User{}, err
	}
	if c.Role == "" {
		c.Role = RoleMember
	}
	if !c.Role.Valid() {
		return User{}, Errorf(Invalid, "invalid_role", "role %q is not known: use member or operator", truncate(string(c.Role), 40))
	}
	u, err := e.newUser(c.AccountID, c.Email, c.Password, c.Role)
	if err != nil {
		return User{}, err
	}
	err = e.audited(ctx, p, u.AccountID, "user.create", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if _, err := tx.Account(ctx, u.AccountID); err != nil {
			return "", err
		}
		if err := tx.CreateUser(ctx, &u); err != nil {
			return "", emailTaken(err, u.Email)
		}
		return "user " + i64(u.ID) + " (" + u.Email + ", " + string(u.Role) + ")", nil
	})
	return u, err
}

// newUser checks a new user's email and password and hashes the password.
func (e *Engine) newUser(accountID int64, email, password string, role Role) (User, error) {
	h, err := e.hasher()
	if err != nil {
		return User{}, err
	}
	email, err = NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	if err := ValidatePassword(password, email); err != nil {
		return User{}, err
	}
	hash, err := h.Hash(password)
	if err != nil {
		return User{}, Wrap(err, "hash the password")
	}
	now := e.clock.Now()
	return User{AccountID: accountID, Email: email, Role: role, PasswordHash: hash, CreatedAt: now, PasswordChangedAt: now}, nil
}

// emailTaken words the store's refusal of a second user with an email.
func emailTaken(err error, email string) error {
	if ReasonOf(err) == ReasonDuplicate {
		return Errorf(Conflict, "email_taken", "a user with the email %s already exists: sign in, or use another address", email)
	}
	return err
}

// Get returns a user the principal sees: an operator any, a member the
// users of its account.
func (s *UserService) Get(ctx context.Context, p Principal, id int64) (User, error) {
	u, err := s.e.store.User(ctx, id)
	if IsKind(err, NotFound) || err == nil && !p.sees(u.AccountID) {
		return User{}, Errorf(NotFound, "user_not_found", "user %d does not exist", id)
	}
	return u, err
}

// Me returns the principal's own user; a principal that is not a signed-in
// user (an API key, System) has none.
func (s *UserService) Me(ctx context.Context, p Principal) (User, error) {
	if p.UserID == 0 {
		return User{}, Errorf(NotFound, "no_user", "this request is not made by a signed-in user: an API key acts for its account, not for a person")
	}
	return s.Get(ctx, p, p.UserID)
}

// List lists the users of an account (a member: its own), or of every
// account for an operator whose filter names none.
func (s *UserService) List(ctx context.Context, p Principal, f UserFilter) (Page[User], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[User]{}, err
	}
	if f.AccountID, err = p.listAccount(f.AccountID); err != nil {
		return Page[User]{}, err
	}
	f.Limit = limit + 1
	us, err := s.e.store.Users(ctx, f)
	if err != nil {
		return Page[User]{}, err
	}
	return pageOf(us, limit, func(u User) int64 { return u.ID }), nil
}

// Remove deletes a user and ends its sessions. A member may remove the
// members of its account; only an operator may remove an operator, and
// never the last one.
func (s *UserService) Remove(ctx context.Context, p Principal, id int64) error {
	e := s.e
	u, err := s.Get(ctx, p, id)
	if err != nil {
		return err
	}
	if u.Role == RoleOperator {
		if err := p.needOperator("remove an operator"); err != nil {
			return err
		}
	}
	err = e.audited(ctx, p, u.AccountID, "user.remove", "user "+i64(u.ID)+" ("+u.Email+")", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if u.Role == RoleOperator {
			n, err := tx.CountUsers(ctx, RoleOperator)
			if err != nil {
				return "", err
			}
			if n <= 1 {
				return "", Errorf(Conflict, "last_operator", "user %d is the last operator: make another operator first", u.ID)
			}
		}
		if err := tx.RevokeSessions(ctx, SessionRevoke{UserID: u.ID}, e.clock.Now()); err != nil {
			return "", err
		}
		return "", tx.DeleteUser(ctx, u.ID)
	})
	e.forgetAuth()
	return err
}

// ResetPassword gives a user a new random password, which is returned
// (and shown once), and ends every session of the user. Only an operator
// may.
func (s *UserService) ResetPassword(ctx context.Context, p Principal, id int64) (string, error) {
	e := s.e
	if err := p.needOperator("reset passwords"); err != nil {
		return "", err
	}
	u, err := s.Get(ctx, p, id)
	if err != nil {
		return "", err
	}
	h, err := e.hasher()
	if err != nil {
		return "", err
	}
	plain := randomCode(20, base62)
	hash, err := h.Hash(plain)
	if err != nil {
		return "", Wrap(err, "hash the password")
	}
	now := e.clock.Now()
	err = e.audited(ctx, p, u.AccountID, "user.reset_password", "user "+i64(u.ID)+" ("+u.Email+")", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if err := tx.SetPassword(ctx, u.ID, hash, now); err != nil {
			return "", err
		}
		return "", tx.RevokeSessions(ctx, SessionRevoke{UserID: u.ID}, now)
	})
	e.forgetAuth()
	if err != nil {
		return "", err
	}
	return plain, nil
}

// ChangePassword changes the signed-in user's own password, given the
// current one, and ends the user's other sessions.
func (s *UserService) ChangePassword(ctx context.Context, p Principal, current, next string) error {
	e := s.e
	u, err := s.Me(ctx, p)
	if err != nil {
		return err
	}
	h, err := e.hasher()
	if err != nil {
		return err
	}
	ok, _, err := h.Verify(current, u.PasswordHash)
	if err != nil {
		return Wrap(err, "check the password")
	}
	if !ok {
		return Errorf(Forbidden, "wrong_password", "the current password is wrong: give the password you signed in with")
	}
	if err := ValidatePassword(next, u.Email); err != nil {
		return err
	}
	if next == current {
		return Errorf(Invalid, "weak_password", "the new password is the current one: choose another")
	}
	hash, err := h.Hash(next)
	if err != nil {
		return Wrap(err, "hash the password")
	}
	now := e.clock.Now()
	err = e.audited(ctx, p, u.AccountID, "user.change_password", "user "+i64(u.ID)+" ("+u.Email+")", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if err := tx.SetPassword(ctx, u.ID, hash, now); err != nil {
			return "", err
		}
		return "", tx.RevokeSessions(ctx, SessionRevoke{UserID: u.ID, Except: p.SessionID}, now)
	})
	e.forgetAuth()
	return err
}
