package transport

import (
	"fmt"
	"net/http"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// Users and invites.

type userCreateRequest struct {
	AccountID int64  `json:"accountId"`
	Email     string `json:"email"`
	Password  string `json:"password"`
	Role      string `json:"role"`
}

type inviteCreateRequest struct {
	AccountID  int64      `json:"accountId"`
	NewAccount bool       `json:"newAccount"`
	Role       string     `json:"role"`
	Email      string     `json:"email"`
	ExpiresAt  *time.Time `json:"expiresAt"`
}

type createdInviteView struct {
	Invite inviteView `json:"invite"`
	Code   string     `json:"code"`
}

type passwordView struct {
	Password string `json:"password"`
}

func (s *Server) listUsers(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	acct, err := queryID(req, "account")
	if err != nil {
		return err
	}
	page, err := s.eng.Users().List(req.Context(), principal(req), push.UserFilter{AccountID: acct, Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newUserView)
}

func (s *Server) createUser(w http.ResponseWriter, req bunrouter.Request) error {
	var body userCreateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	u, err := s.eng.Users().Create(req.Context(), principal(req), push.UserCreate{AccountID: body.AccountID, Email: body.Email,
		Password: body.Password, Role: push.Role(body.Role)})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "", newUserView(u))
	return nil
}

func (s *Server) getUser(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "user")
	if err != nil {
		return err
	}
	u, err := s.eng.Users().Get(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newUserView(u))
	return nil
}

func (s *Server) removeUser(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "user")
	if err != nil {
		return err
	}
	if err := s.eng.Users().Remove(req.Context(), principal(req), id); err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the user was removed and its sessions ended", nil)
	return nil
}

func (s *Server) resetPassword(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "user")
	if err != nil {
		return err
	}
	pw, err := s.eng.Users().ResetPassword(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "a new password was set and the user's sessions ended: give it to the user, it is shown once", passwordView{Password: pw})
	return nil
}

func (s *Server) listInvites(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	acct, err := queryID(req, "account")
	if err != nil {
		return err
	}
	page, err := s.eng.Invites().List(req.Context(), principal(req), push.InviteFilter{AccountID: acct, Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newInviteView)
}

func (s *Server) createInvite(w http.ResponseWriter, req bunrouter.Request) error {
	var body inviteCreateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	p := principal(req)
	c := push.InviteCreate{Role: push.Role(body.Role), Email: body.Email, AccountID: body.AccountID}
	switch {
	case body.NewAccount && body.AccountID != 0:
		return push.Errorf(push.Invalid, "invalid_invite", "give accountId (join that account) or newAccount (sign up with an account of one's own), not both")
	case body.NewAccount:
		c.AccountID = 0
	case c.AccountID == 0:
		c.AccountID = p.AccountID
	}
	ttl, err := ttlUntil(body.ExpiresAt, time.Now(), "invite")
	if err != nil {
		return err
	}
	c.TTL = ttl
	inv, code, err := s.eng.Invites().Create(req.Context(), p, c)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "give the code to the person: it is shown once", createdInviteView{Invite: newInviteView(inv), Code: code})
	return nil
}

func (s *Server) revokeInvite(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "invite")
	if err != nil {
		return err
	}
	inv, err := s.eng.Invites().Revoke(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the invite was revoked", newInviteView(inv))
	return nil
}

// userSection is users and invites.
func (s *Server) userSection() section {
	routes := []Route{
		{Method: http.MethodGet, Path: managePrefix + "/users", Summary: "List users", Auth: true, Browser: true, Doc: Doc{
			ID: "listUsers", Tag: "users", Params: append([]Param{accountQuery()}, pageParams()...),
			Description: "The users of an account (a member: its own), newest first; an operator without ?account= lists every user.",
			Answers:     []Answer{okAnswer(200, "A page of users.", "UserListResponse", nil)},
			Errors:      []int{400, 404},
		}, Handler: s.listUsers},
		{Method: http.MethodPost, Path: managePrefix + "/users", Summary: "Make a user (operators)", Auth: true, Browser: true, Doc: Doc{
			ID: "createUser", Tag: "users", Body: "UserCreateRequest",
			Description: "Makes a user with a password directly. Only operators may; members bring people in with an invite.",
			BodyExample: map[string]any{"accountId": 1, "email": "grace@example.com", "password": "correct horse battery staple", "role": "member"},
			Answers:     []Answer{okAnswer(201, "The new user.", "UserResponse", nil)},
			Errors:      []int{400, 404, 409, 413},
		}, Handler: s.createUser},
		{Method: http.MethodGet, Path: managePrefix + "/users/:id", Summary: "Show a user", Auth: true, Browser: true, Doc: Doc{
			ID: "getUser", Tag: "users", Params: []Param{idParam("user")}, Description: "A user of your account (operators: any).",
			Answers: []Answer{okAnswer(200, "The user.", "UserResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.getUser},
		{Method: http.MethodDelete, Path: managePrefix + "/users/:id", Summary: "Remove a user", Auth: true, Browser: true, Doc: Doc{
			ID: "removeUser", Tag: "users", Params: []Param{idParam("user")},
			Description: "Removes a user and ends its sessions. Members remove members of their account; only operators remove operators, never the last one.",
			Answers:     []Answer{okAnswer(200, "Removed.", "EmptyResponse", nil)}, Errors: []int{400, 404, 409},
		}, Handler: s.removeUser},
		{Method: http.MethodPost, Path: managePrefix + "/users/:id/password", Summary: "Reset a user's password (operators)", Auth: true, Browser: true, Doc: Doc{
			ID: "resetPassword", Tag: "users", Params: []Param{idParam("user")},
			Description: "Gives the user a new random password, answered once, and ends the user's sessions.",
			Answers:     []Answer{okAnswer(200, "The new password (shown once).", "NewPasswordResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.resetPassword},
		{Method: http.MethodGet, Path: managePrefix + "/invites", Summary: "List invites", Auth: true, Browser: true, Doc: Doc{
			ID: "listInvites", Tag: "users", Params: append([]Param{accountQuery()}, pageParams()...),
			Description: "Invites of an account (a member: its own), newest first; an operator without ?account= lists every invite, the sign-up ones too.",
			Answers:     []Answer{okAnswer(200, "A page of invites.", "InviteListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listInvites},
		{Method: http.MethodPost, Path: managePrefix + "/invites", Summary: "Make an invite", Auth: true, Browser: true, Doc: Doc{
			ID: "createInvite", Tag: "users", Body: "InviteCreateRequest",
			Description: "Makes a one-time invite code, answered once. A member invites members into its account; an operator invites into any account, " +
				"operators too, or (newAccount) to sign up with an account of one's own. It lasts 7 days unless expiresAt says otherwise (at most 90).",
			BodyExample: map[string]any{"role": "member", "email": "grace@example.com"},
			Answers:     []Answer{okAnswer(201, "The invite and its code (shown once).", "NewInviteResponse", nil)}, Errors: []int{400, 404, 413},
		}, Handler: s.createInvite},
		{Method: http.MethodDelete, Path: managePrefix + "/invites/:id", Summary: "Revoke an invite", Auth: true, Browser: true, Doc: Doc{
			ID: "revokeInvite", Tag: "users", Params: []Param{idParam("invite")}, Description: "Revokes an unused invite.",
			Answers: []Answer{okAnswer(200, "The revoked invite.", "InviteResponse", nil)}, Errors: []int{400, 404, 409},
		}, Handler: s.revokeInvite},
	}
	return section{
		tags:   []openAPITag{{"users", "The people of an account, and the invites that bring them in."}},
		routes: routes,
		schemas: map[string]Schema{
			"UserCreateRequest": object("", false,
				req("accountId", idField("The user's account.")),
				req("email", str("The email address to sign in with.").with("maxLength", push.MaxEmail)),
				req("password", str(fmt.Sprintf("The password: %d to %d characters, hard to guess.", push.MinPassword, push.MaxPassword)).with("minLength", push.MinPassword, "maxLength", push.MaxPassword)),
				opt("role", roleSchema())),
			"InviteCreateRequest": object("", false,
				opt("accountId", idField("The account to join (default: yours).")),
				opt("newAccount", boolean("Sign up with an account of one's own instead (operators).")),
				opt("role", roleSchema()),
				opt("email", str("The only address that may use it (default: any).").with("maxLength", push.MaxEmail)),
				opt("expiresAt", timeField("When it expires (default: in 7 days)"))),
			"NewInvite": object("A new invite and its code.", true,
				req("invite", ref("Invite")),
				req("code", str("The code: shown once, give it to the person."))),
			"NewInviteResponse": manageEnvelope("The invite.", "NewInvite"),
			"NewPassword": object("A new password.", true,
				req("password", str("The password: shown once."))),
			"NewPasswordResponse": manageEnvelope("The password.", "NewPassword"),
		},
	}
}
