package push

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Session is a signed-in user's session. Only a hash of its token is
// stored; the token itself is given once, at sign-in (the console keeps it
// in a cookie).
type Session struct {
	ID        int64
	UserID    int64
	AccountID int64
	TokenHash string
	CreatedAt time.Time
	SeenAt    time.Time // the last request, within a minute
	ExpiresAt time.Time // the absolute end
	RevokedAt time.Time // zero: not revoked
	Address   string    // where it signed in from
	Agent     string    // the user agent it signed in with, shortened
}

// SessionFilter selects a user's sessions for List: newest first, at most
// Limit, after Cursor.
type SessionFilter struct {
	UserID int64
	Limit  int
	Cursor string
}

// SessionRevoke names the sessions a store revokes: the one with ID, or
// every one of UserID but Except.
type SessionRevoke struct {
	ID     int64
	UserID int64
	Except int64
}

// SignIn is a sign-in attempt.
type SignIn struct {
	Email    string
	Password string
	Address  string // the client's IP address: attempts are throttled by it
	Agent    string // the client's user agent, to tell sessions apart
}

// SignUpMode says who may make an account by signing up.
type SignUpMode string

// Sign-up modes.
const (
	SignUpClosed SignUpMode = "closed" // only operators make accounts and users (the default)
	SignUpInvite SignUpMode = "invite" // with a one-time code an operator or a member made
	SignUpOpen   SignUpMode = "open"   // anyone
)

// Valid reports whether m is a known mode.
func (m SignUpMode) Valid() bool { return m == SignUpClosed || m == SignUpInvite || m == SignUpOpen }

// SignUp is a request to make a user (and, unless an invite names an
// account, its account).
type SignUp struct {
	SignIn
	// AccountName names the new account (default: the email's name part).
	AccountName string
	// Invite is the invite code, needed unless sign-up is open.
	Invite string
}

// Sessions configure sign-in: how long a session lasts idle and at most,
// and how sign-up works.
type Sessions struct {
	Idle   time.Duration // a session unused this long ends; default 24 h
	Max    time.Duration // a session ends this long after sign-in; default 30 days
	SignUp SignUpMode    // default SignUpClosed
}

func (s Sessions) withDefaults() Sessions {
	if s.Idle <= 0 {
		s.Idle = 24 * time.Hour
	}
	if s.Max <= 0 {
		s.Max = 30 * 24 * time.Hour
	}
	if s.SignUp == "" {
		s.SignUp = SignUpClosed
	}
	return s
}

// SessionService holds the verbs of signing in and out. Get it from
// Engine.Sessions.
type SessionService struct{ e *Engine }

// Sessions returns the verbs of signing in and out.
func (e *Engine) Sessions() *SessionService { return &e.sessions }

// SignUpMode says who may make an account by signing up on this engine.
func (s *SessionService) SignUpMode() SignUpMode { return s.e.sessionOpts.SignUp }

// seenEvery is how often a session's last-seen time is written.
const seenEvery = time.Minute

// maxAgent bounds the user agent kept with a session.
const maxAgent = 200

// SignIn checks an email and a password and opens a session. An unknown
// email and a wrong password get the same answer in about the same time;
// failures are throttled per address and per email with growing waits.
// The account's first sign-in grants its initial points, once.
func (s *SessionService) SignIn(ctx context.Context, in SignIn) (Session, string, User, error) {
	e := s.e
	h, err := e.hasher()
	if err != nil {
		return Session{}, "", User{}, err
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	now := e.clock.Now()
	keys := e.signinKeys(in.Address, email)
	if wait := e.throttle.wait(keys, now); wait > 0 {
		return Session{}, "", User{}, tooManySignIns(wait)
	}
	u, err := e.store.UserByEmail(ctx, email)
	if err != nil && !IsKind(err, NotFound) {
		return Session{}, "", User{}, err
	}
	hash := u.PasswordHash
	if hash == "" {
		// An unknown email costs a verification too, so that its answer
		// takes as long as a wrong password's.
		hash = e.dummyHash()
	}
	ok, rehash, verr := h.Verify(in.Password, hash)
	if verr != nil && u.ID != 0 {
		return Session{}, "", User{}, Wrap(verr, "check the password")
	}
	if !ok || u.ID == 0 || in.Password == "" {
		e.throttle.fail(keys, now)
		return Session{}, "", User{}, Errorf(Unauthenticated, "wrong_credentials", "the email or the password is wrong: check both, or ask an operator to reset the password")
	}
	e.throttle.clear(keys[1:]) // the email's; the address's decays
	if rehash {
		// The defaults changed since the hash was made: store a new one.
		if nh, err := h.Hash(in.Password); err == nil {
			_ = e.store.SetPassword(ctx, u.ID, nh, u.PasswordChangedAt)
		}
	}
	return s.open(ctx, u, in, now)
}

// open opens a session for u: grants the account's initial points when it
// has none yet, records the sign-in, and stores the session.
func (s *SessionService) open(ctx context.Context, u User, in SignIn, now time.Time) (Session, string, User, error) {
	e := s.e
	a, err := e.store.Account(ctx, u.AccountID)
	if err != nil {
		return Session{}, "", User{}, err
	}
	if a.Status != AccountActive {
		return Session{}, "", User{}, Errorf(Forbidden, "account_suspended", "your account is %s: contact the operator", a.Status)
	}
	token := randomCode(43, base62)
	sess := Session{
		UserID: u.ID, AccountID: u.AccountID, TokenHash: HashKey(token), CreatedAt: now, SeenAt: now,
		ExpiresAt: now.Add(e.sessionOpts.Max), Address: truncate(in.Address, 64), Agent: truncate(strings.ToValidUTF8(in.Agent, ""), maxAgent),
	}
	p := Principal{AccountID: u.AccountID, UserID: u.ID, Email: u.Email, Role: u.Role, Address: in.Address}
	var granted int64
	err = e.audited(ctx, p, u.AccountID, "session.create", "user "+i64(u.ID)+" ("+u.Email+")", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		granted = 0
		if e.points.Initial > 0 {
			ok, err := tx.GrantInitial(ctx, LedgerEntry{AccountID: u.AccountID, Kind: LedgerInitial, Amount: e.points.Initial, At: now, Note: "initial points, at the account's first sign-in"})
			if err != nil {
				return "", err
			}
			if ok {
				granted = e.points.Initial
			}
		}
		if err := tx.SetSignedIn(ctx, u.ID, now); err != nil {
			return "", err
		}
		return "", tx.CreateSession(ctx, &sess)
	})
	if err != nil {
		return Session{}, "", User{}, err
	}
	if granted > 0 {
		e.log.Info("initial points granted at the account's first sign-in", "account", u.AccountID, "points", granted)
	}
	u.SignedInAt = now
	return sess, token, u, nil
}

// SignUp makes a user, and an account for it unless its invite names
// one, then signs it in. Whether anyone may is the engine's SignUp mode:
// closed, by invite, or open.
func (s *SessionService) SignUp(ctx context.Context, in SignUp) (Session, string, User, error) {
	e := s.e
	mode := e.sessionOpts.SignUp
	if mode == SignUpClosed {
		return Session{}, "", User{}, Errorf(Forbidden, "signup_closed", "this server does not take sign-ups: ask an operator for an account")
	}
	now := e.clock.Now()
	keys := e.signinKeys(in.Address, "")
	if wait := e.throttle.wait(keys, now); wait > 0 {
		return Session{}, "", User{}, tooManySignIns(wait)
	}
	var inv Invite
	switch {
	case in.Invite != "":
		var err error
		if inv, err = e.store.InviteByHash(ctx, HashKey(normalizeCode(in.Invite))); err != nil || !inv.Usable(now) {
			e.throttle.fail(keys, now)
			return Session{}, "", User{}, Errorf(Forbidden, "invalid_invite", "the invite code is unknown, used, revoked or expired: ask for a new one")
		}
	case mode == SignUpInvite:
		return Session{}, "", User{}, Errorf(Forbidden, "invite_required", "sign-up on this server needs an invite code: ask an operator or a member for one")
	}
	role := RoleMember
	if inv.ID != 0 {
		role = inv.Role
	}
	u, err := e.newUser(inv.AccountID, in.Email, in.Password, role)
	if err != nil {
		return Session{}, "", User{}, err
	}
	if inv.Email != "" && inv.Email != u.Email {
		return Session{}, "", User{}, Errorf(Forbidden, "invalid_invite", "this invite is for another email address: sign up with the address it was made for")
	}
	name := strings.TrimSpace(in.AccountName)
	if name == "" {
		name, _, _ = strings.Cut(u.Email, "@")
	}
	if inv.AccountID == 0 {
		if err := validateName("account", name); err != nil {
			return Session{}, "", User{}, err
		}
	}
	p := Principal{Email: u.Email, Role: role, Address: in.Address}
	err = e.audited(ctx, p, inv.AccountID, "user.signup", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		u.ID = 0
		if inv.AccountID == 0 {
			// A signed-up account gets its initial points at its first
			// sign-in, which follows.
			a := Account{Name: name, Status: AccountActive, CreatedAt: now}
			if err := tx.CreateAccount(ctx, &a); err != nil {
				return "", err
			}
			u.AccountID = a.ID
		} else if _, err := tx.Account(ctx, inv.AccountID); err != nil {
			return "", err
		}
		if err := tx.CreateUser(ctx, &u); err != nil {
			return "", emailTaken(err, u.Email)
		}
		if inv.ID != 0 {
			if err := tx.UseInvite(ctx, inv.ID, u.ID, now); err != nil {
				return "", err
			}
		}
		obj := "user " + i64(u.ID) + " (" + u.Email + ") in account " + i64(u.AccountID)
		if inv.ID != 0 {
			obj += " by invite " + i64(inv.ID)
		}
		return obj, nil
	})
	if err != nil {
		return Session{}, "", User{}, err
	}
	return s.open(ctx, u, in.SignIn, now)
}

// Authenticate checks a session token and returns the principal of its
// user. A missing, unknown, revoked or expired session is Unauthenticated;
// a session of a suspended account is Forbidden. As for keys, a session
// that authenticated is remembered under the auth epoch, which a sign-out,
// a password change or a suspension on any node moves.
func (s *SessionService) Authenticate(ctx context.Context, token string) (Principal, error) {
	e := s.e
	if token == "" || len(token) > 100 {
		return Principal{}, Errorf(Unauthenticated, "no_session", "you are not signed in: sign in first")
	}
	hash := HashKey(token)
	now := e.clock.Now()
	var epoch int64
	if e.auth != nil {
		var err error
		if epoch, err = e.auth.epoch(ctx); err != nil {
			return Principal{}, err
		}
		if ent, ok := e.auth.entries.get("s:" + hash); ok && ent.epoch == epoch && now.Before(ent.expiresAt) && now.Sub(ent.seen) < seenEvery {
			return ent.principal, nil
		}
	}
	sess, err := e.store.SessionByHash(ctx, hash)
	if IsKind(err, NotFound) {
		return Principal{}, Errorf(Unauthenticated, "no_session", "your session is unknown or has ended: sign in again")
	}
	if err != nil {
		return Principal{}, err
	}
	expires := sess.ExpiresAt
	if idle := sess.SeenAt.Add(e.sessionOpts.Idle); idle.Before(expires) {
		expires = idle
	}
	switch {
	case !sess.RevokedAt.IsZero():
		return Principal{}, Errorf(Unauthenticated, "session_ended", "you signed out, or your session was ended: sign in again")
	case !now.Before(expires):
		return Principal{}, Errorf(Unauthenticated, "session_expired", "your session expired: sign in again")
	}
	u, err := e.store.User(ctx, sess.UserID)
	if IsKind(err, NotFound) {
		return Principal{}, Errorf(Unauthenticated, "session_ended", "your user was removed: ask an operator")
	}
	if err != nil {
		return Principal{}, err
	}
	a, err := e.store.Account(ctx, u.AccountID)
	if err != nil {
		return Principal{}, err
	}
	if a.Status != AccountActive {
		return Principal{}, Errorf(Forbidden, "account_suspended", "your account is %s: contact the operator", a.Status)
	}
	if now.Sub(sess.SeenAt) >= seenEvery {
		if err := e.store.TouchSession(ctx, sess.ID, now); err != nil {
			return Principal{}, err
		}
		sess.SeenAt = now
	}
	p := Principal{AccountID: u.AccountID, UserID: u.ID, SessionID: sess.ID, Email: u.Email, Role: u.Role}
	if e.auth != nil {
		if idle := sess.SeenAt.Add(e.sessionOpts.Idle); idle.Before(expires) {
			expires = idle
		}
		e.auth.entries.put("s:"+hash, authEntry{principal: p, expiresAt: expires, epoch: epoch, seen: sess.SeenAt})
	}
	return p, nil
}

// List lists the signed-in user's sessions, newest first.
func (s *SessionService) List(ctx context.Context, p Principal, f SessionFilter) (Page[Session], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[Session]{}, err
	}
	if p.UserID == 0 {
		return Page[Session]{}, Errorf(NotFound, "no_user", "this request is not made by a signed-in user: only people have sessions")
	}
	f.UserID, f.Limit = p.UserID, limit+1
	ss, err := s.e.store.Sessions(ctx, f)
	if err != nil {
		return Page[Session]{}, err
	}
	return pageOf(ss, limit, func(s Session) int64 { return s.ID }), nil
}

// SignOut ends one of the signed-in user's sessions (0: the current one).
func (s *SessionService) SignOut(ctx context.Context, p Principal, id int64) error {
	if p.UserID == 0 {
		return Errorf(NotFound, "no_user", "this request is not made by a signed-in user: only people sign out")
	}
	if id == 0 {
		id = p.SessionID
	}
	e := s.e
	err := e.audited(ctx, p, p.AccountID, "session.end", "session "+i64(id), func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		sess, err := tx.Session(ctx, id)
		if IsKind(err, NotFound) || err == nil && sess.UserID != p.UserID {
			return "", Errorf(NotFound, "session_not_found", "session %d does not exist among yours", id)
		}
		if err != nil {
			return "", err
		}
		return "", tx.RevokeSessions(ctx, SessionRevoke{ID: id}, e.clock.Now())
	})
	e.forgetAuth()
	return err
}

// SignOutEverywhere ends every session of the signed-in user, this one
// too.
func (s *SessionService) SignOutEverywhere(ctx context.Context, p Principal) error {
	if p.UserID == 0 {
		return Errorf(NotFound, "no_user", "this request is not made by a signed-in user: only people sign out")
	}
	e := s.e
	err := e.audited(ctx, p, p.AccountID, "session.end_all", "user "+i64(p.UserID), func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		return "", tx.RevokeSessions(ctx, SessionRevoke{UserID: p.UserID}, e.clock.Now())
	})
	e.forgetAuth()
	return err
}

// signinKeys are the throttle's keys of an attempt: its address and its
// email.
func (e *Engine) signinKeys(address, email string) []string {
	keys := []string{"a:" + address}
	if email != "" && utf8.ValidString(email) {
		keys = append(keys, "e:"+truncate(email, MaxEmail))
	}
	return keys
}

func tooManySignIns(wait time.Duration) error {
	wait = ceilSecond(wait)
	return &Error{Kind: TooMany, Reason: "signin_throttled", RetryAfter: wait,
		Message: "too many failed sign-ins from here or for this email: wait " + wait.String() + ", then try again"}
}

// i64 formats an id for messages.
func i64(n int64) string { return strconv.FormatInt(n, 10) }
