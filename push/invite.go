package push

import (
	"context"
	"crypto/rand"
	"strings"
	"time"
)

// Invite is a one-time code that lets a person sign up: into an account
// (AccountID), or with a new account of their own (AccountID 0, made by
// an operator). Only a hash of the code is stored; the code is shown once.
type Invite struct {
	ID        int64
	CodeHash  string
	Hint      string // the code's last four characters, to tell invites apart
	AccountID int64  // 0: the sign-up makes a new account
	Role      Role
	Email     string // when set, only this address may use it
	CreatedBy string // who made it, as the audit trail names them
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero: not used
	UsedBy    int64     // the user it made
	RevokedAt time.Time // zero: not revoked
}

// Usable reports whether the invite may still be used at now.
func (i Invite) Usable(now time.Time) bool {
	return i.ID != 0 && i.UsedAt.IsZero() && i.RevokedAt.IsZero() && now.Before(i.ExpiresAt)
}

// InviteCreate is a new invite. TTL defaults to 7 days.
type InviteCreate struct {
	AccountID int64 // 0: a sign-up with a new account (operators only)
	Role      Role  // default RoleMember
	Email     string
	TTL       time.Duration
}

// InviteFilter selects invites for List: an account's (0: every
// account's and the sign-up invites, for an operator), newest first.
type InviteFilter struct {
	AccountID int64
	Limit     int
	Cursor    string
}

// InviteService holds the verbs on invites. Get it from Engine.Invites.
type InviteService struct{ e *Engine }

// Invites returns the verbs on invites.
func (e *Engine) Invites() *InviteService { return &e.invites }

// The bounds of an invite's life.
const (
	defaultInviteTTL = 7 * 24 * time.Hour
	maxInviteTTL     = 90 * 24 * time.Hour
)

// inviteAlphabet has no letters that read alike (0/O, 1/I/L) and no case.
const inviteAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// Create makes an invite and returns it with its code, which is not stored
// and cannot be shown again. A member invites members into its own
// account; an operator invites into any account, with any role, or to a
// new account.
func (s *InviteService) Create(ctx context.Context, p Principal, c InviteCreate) (Invite, string, error) {
	e := s.e
	if c.Role == "" {
		c.Role = RoleMember
	}
	if !c.Role.Valid() {
		return Invite{}, "", Errorf(Invalid, "invalid_role", "role %q is not known: use member or operator", truncate(string(c.Role), 40))
	}
	switch {
	case c.AccountID == 0:
		if err := p.needOperator("invite people to sign up with an account of their own"); err != nil {
			return Invite{}, "", err
		}
	case !p.sees(c.AccountID):
		return Invite{}, "", accountNotFound(c.AccountID)
	}
	if c.Role == RoleOperator {
		if err := p.needOperator("invite operators"); err != nil {
			return Invite{}, "", err
		}
	}
	if c.TTL == 0 {
		c.TTL = defaultInviteTTL
	}
	if c.TTL < time.Minute || c.TTL > maxInviteTTL {
		return Invite{}, "", Errorf(Invalid, "invalid_expiry", "an invite lasts from a minute to %d days, not %s", int(maxInviteTTL/(24*time.Hour)), c.TTL)
	}
	if c.Email != "" {
		em, err := NormalizeEmail(c.Email)
		if err != nil {
			return Invite{}, "", err
		}
		c.Email = em
	}
	code := randomCode(20, inviteAlphabet)
	now := e.clock.Now()
	inv := Invite{CodeHash: HashKey(code), Hint: code[len(code)-4:], AccountID: c.AccountID, Role: c.Role, Email: c.Email,
		CreatedBy: p.actor(), CreatedAt: now, ExpiresAt: now.Add(c.TTL)}
	err := e.audited(ctx, p, c.AccountID, "invite.create", "", func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		if c.AccountID != 0 {
			if _, err := tx.Account(ctx, c.AccountID); err != nil {
				return "", err
			}
		}
		if err := tx.CreateInvite(ctx, &inv); err != nil {
			return "", err
		}
		return "invite " + i64(inv.ID) + " (" + string(inv.Role) + ")", nil
	})
	if err != nil {
		return Invite{}, "", err
	}
	return inv, code, nil
}

// List lists invites, newest first: a member its account's, an operator
// any account's or (AccountID 0) every one.
func (s *InviteService) List(ctx context.Context, p Principal, f InviteFilter) (Page[Invite], error) {
	limit, err := pageLimit(f.Limit, f.Cursor)
	if err != nil {
		return Page[Invite]{}, err
	}
	if f.AccountID, err = p.listAccount(f.AccountID); err != nil {
		return Page[Invite]{}, err
	}
	f.Limit = limit + 1
	is, err := s.e.store.Invites(ctx, f)
	if err != nil {
		return Page[Invite]{}, err
	}
	return pageOf(is, limit, func(i Invite) int64 { return i.ID }), nil
}

// Revoke revokes an unused invite; revoking it again changes nothing.
func (s *InviteService) Revoke(ctx context.Context, p Principal, id int64) (Invite, error) {
	e := s.e
	inv, err := e.store.Invite(ctx, id)
	notFound := Errorf(NotFound, "invite_not_found", "invite %d does not exist", id)
	if IsKind(err, NotFound) || err == nil && (inv.AccountID == 0 && !p.Operator() || inv.AccountID != 0 && !p.sees(inv.AccountID)) {
		return Invite{}, notFound
	}
	if err != nil {
		return Invite{}, err
	}
	if !inv.RevokedAt.IsZero() {
		return inv, nil
	}
	if !inv.UsedAt.IsZero() {
		return Invite{}, Errorf(Conflict, "invite_used", "invite %d was used already: remove the user it made instead", id)
	}
	err = e.audited(ctx, p, inv.AccountID, "invite.revoke", "invite "+i64(id), func(ctx context.Context, tx Tx, _ *txEvents) (string, error) {
		return "", tx.RevokeInvite(ctx, id, e.clock.Now())
	})
	if err != nil {
		return Invite{}, err
	}
	return e.store.Invite(ctx, id)
}

// normalizeCode reads a code as a person may type it: any case, with
// spaces or dashes between groups.
func normalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '-':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, strings.TrimSpace(code))
}

// randomCode returns n characters drawn uniformly from alphabet (at most
// 256 characters) with crypto/rand.
func randomCode(n int, alphabet string) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		if _, err := rand.Read(buf[:]); err != nil {
			panic("push: crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			if int(c) >= limit {
				continue
			}
			out = append(out, alphabet[int(c)%len(alphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return string(out)
}
