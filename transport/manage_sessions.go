package transport

import (
	"fmt"
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// Signing in and out, signing up, and the caller's own user.

type signInRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type signUpRequest struct {
	Email       string `json:"email"`
	Password    string `json:"password"`
	AccountName string `json:"accountName"`
	Invite      string `json:"invite"`
}

// signedInView answers a sign-in or a sign-up; the token is in the cookie.
type signedInView struct {
	User    userView    `json:"user"`
	Session sessionView `json:"session"`
}

// meView is who the caller is: its account, its role, and its user (a
// person) or key (a program).
type meView struct {
	Account accountView `json:"account"`
	Role    string      `json:"role"`
	User    *userView   `json:"user"`
	KeyID   *int64      `json:"keyId"`
}

type passwordRequest struct {
	Current string `json:"current"`
	New     string `json:"new"`
}

func (s *Server) signIn(w http.ResponseWriter, req bunrouter.Request) error {
	var body signInRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	sess, token, u, err := s.eng.Sessions().SignIn(req.Context(), push.SignIn{
		Email: body.Email, Password: body.Password, Address: clientAddress(req.Request), Agent: req.UserAgent()})
	if err != nil {
		return err
	}
	setSessionCookie(w, token, sess.ExpiresAt, s.secureCookie(req.Request))
	writeOK(w, http.StatusOK, "signed in", signedInView{User: newUserView(u), Session: newSessionView(sess, sess.ID)})
	return nil
}

func (s *Server) signUp(w http.ResponseWriter, req bunrouter.Request) error {
	var body signUpRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	sess, token, u, err := s.eng.Sessions().SignUp(req.Context(), push.SignUp{
		SignIn:      push.SignIn{Email: body.Email, Password: body.Password, Address: clientAddress(req.Request), Agent: req.UserAgent()},
		AccountName: body.AccountName, Invite: body.Invite})
	if err != nil {
		return err
	}
	setSessionCookie(w, token, sess.ExpiresAt, s.secureCookie(req.Request))
	writeOK(w, http.StatusCreated, "signed up and signed in", signedInView{User: newUserView(u), Session: newSessionView(sess, sess.ID)})
	return nil
}

func (s *Server) listSessions(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	p := principal(req)
	page, err := s.eng.Sessions().List(req.Context(), p, push.SessionFilter{Limit: limit, Cursor: cursor})
	return writePage(w, page, err, func(x push.Session) sessionView { return newSessionView(x, p.SessionID) })
}

// endSession signs out: the session of the request ("current"), or one of
// the user's others by id.
func (s *Server) endSession(w http.ResponseWriter, req bunrouter.Request) error {
	p := principal(req)
	var id int64
	if req.Param("id") != "current" {
		var err error
		if id, err = pathID(req, "session"); err != nil {
			return err
		}
	}
	if err := s.eng.Sessions().SignOut(req.Context(), p, id); err != nil {
		return err
	}
	if id == 0 || id == p.SessionID {
		clearSessionCookie(w, s.secureCookie(req.Request))
	}
	writeOK(w, http.StatusOK, "signed out", nil)
	return nil
}

func (s *Server) signOutEverywhere(w http.ResponseWriter, req bunrouter.Request) error {
	if err := s.eng.Sessions().SignOutEverywhere(req.Context(), principal(req)); err != nil {
		return err
	}
	clearSessionCookie(w, s.secureCookie(req.Request))
	writeOK(w, http.StatusOK, "signed out of every session", nil)
	return nil
}

func (s *Server) getMe(w http.ResponseWriter, req bunrouter.Request) error {
	p := principal(req)
	ctx := req.Context()
	a, err := s.eng.Accounts().Get(ctx, p, p.AccountID)
	if err != nil {
		return err
	}
	v := meView{Account: newAccountView(a), Role: string(p.Role)}
	if p.UserID != 0 {
		u, err := s.eng.Users().Me(ctx, p)
		if err != nil {
			return err
		}
		uv := newUserView(u)
		v.User = &uv
	}
	if p.KeyID != 0 {
		id := p.KeyID
		v.KeyID = &id
	}
	writeOK(w, http.StatusOK, "", v)
	return nil
}

func (s *Server) changePassword(w http.ResponseWriter, req bunrouter.Request) error {
	var body passwordRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	if err := s.eng.Users().ChangePassword(req.Context(), principal(req), body.Current, body.New); err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the password was changed and your other sessions were ended", nil)
	return nil
}

// sessionSection is signing in and out, signing up, and the caller itself.
func (s *Server) sessionSection() section {
	exUser := map[string]any{"id": 1, "accountId": 1, "email": "ada@example.com", "role": "member", "createdAt": exTime,
		"passwordChangedAt": exTime, "signedInAt": exTime}
	exSession := map[string]any{"id": 7, "current": true, "createdAt": exTime, "seenAt": exTime, "expiresAt": "2026-12-21T09:30:00.125Z",
		"revokedAt": nil, "address": "203.0.113.5", "agent": "Mozilla/5.0"}
	signedIn := map[string]any{"code": 0, "message": "signed in", "data": map[string]any{"user": exUser, "session": exSession}}
	cookie := "The answer sets the session cookie " + SessionCookie + " (HttpOnly, SameSite=Lax, Secure over TLS)."
	routes := []Route{
		{Method: http.MethodPost, Path: managePrefix + "/sessions", Summary: "Sign in", Browser: true, Doc: Doc{
			ID: "signIn", Tag: "sessions", Body: "SignInRequest",
			Description: "Signs a person in with an email and a password and opens a session. " + cookie + " An unknown email and a wrong password get the same answer; " +
				"failed attempts from one address or for one email make the next ones wait, longer after each failure (429 signin_throttled with Retry-After). " +
				"The first sign-in of an account grants its initial points, once.",
			BodyExample: map[string]any{"email": "ada@example.com", "password": "correct horse battery staple"},
			Answers:     []Answer{{Status: 200, Description: "Signed in. " + cookie, Schema: "SignedInResponse", Example: signedIn}},
			Errors:      []int{400, 401, 403, 413, 429},
		}, Handler: s.signIn},
		{Method: http.MethodPost, Path: managePrefix + "/signup", Summary: "Sign up", Browser: true, Doc: Doc{
			ID: "signUp", Tag: "sessions", Body: "SignUpRequest",
			Description: "Makes a user, and an account for it unless its invite names one, then signs it in. Whether anyone may depends on the server: closed (403 signup_closed), " +
				"by invite (the invite code is needed), or open. " + cookie,
			BodyExample: map[string]any{"email": "ada@example.com", "password": "correct horse battery staple", "accountName": "Ada's alerts", "invite": "7KQ2-…"},
			Answers: []Answer{{Status: 201, Description: "Signed up and signed in. " + cookie, Schema: "SignedInResponse",
				Example: map[string]any{"code": 0, "message": "signed up and signed in", "data": map[string]any{"user": exUser, "session": exSession}}}},
			Errors: []int{400, 403, 409, 413, 429},
		}, Handler: s.signUp},
		{Method: http.MethodGet, Path: managePrefix + "/sessions", Summary: "List your sessions", Auth: true, Browser: true, Doc: Doc{
			ID: "listSessions", Tag: "sessions", Params: pageParams(),
			Description: "The signed-in user's sessions, newest first, ended ones too.",
			Answers:     []Answer{okAnswer(200, "A page of sessions.", "SessionListResponse", nil)},
			Errors:      []int{400, 404},
		}, Handler: s.listSessions},
		{Method: http.MethodDelete, Path: managePrefix + "/sessions/:id", Summary: "Sign out", Auth: true, Browser: true, Doc: Doc{
			ID: "endSession", Tag: "sessions",
			Params: []Param{{Name: "id", In: "path", Required: true, Description: "current (this session), or the id of another of your sessions.",
				Schema: str("current, or a session id.").with("pattern", "^(current|[1-9][0-9]*)$"), Example: "current"}},
			Description: "Ends a session of the signed-in user: this one (current, which also clears the cookie) or another by id.",
			Answers:     []Answer{okAnswer(200, "Signed out.", "EmptyResponse", nil)},
			Errors:      []int{400, 404},
		}, Handler: s.endSession},
		{Method: http.MethodDelete, Path: managePrefix + "/sessions", Summary: "Sign out everywhere", Auth: true, Browser: true, Doc: Doc{
			ID: "signOutEverywhere", Tag: "sessions", Description: "Ends every session of the signed-in user, this one too, on every node at once.",
			Answers: []Answer{okAnswer(200, "Signed out everywhere.", "EmptyResponse", nil)},
			Errors:  []int{404},
		}, Handler: s.signOutEverywhere},
		{Method: http.MethodGet, Path: managePrefix + "/me", Summary: "Who you are", Auth: true, Browser: true, Doc: Doc{
			ID: "getMe", Tag: "sessions", Description: "The caller: its account, its role, and its user (a signed-in person) or key (a program).",
			Answers: []Answer{okAnswer(200, "The caller.", "MeResponse", map[string]any{"code": 0, "message": "", "data": map[string]any{
				"account": map[string]any{"id": 1, "name": "acme", "status": "active", "points": 100, "createdAt": exTime},
				"role":    "member", "user": exUser, "keyId": nil}})},
			Errors: []int{404},
		}, Handler: s.getMe},
		{Method: http.MethodPut, Path: managePrefix + "/me/password", Summary: "Change your password", Auth: true, Browser: true, Doc: Doc{
			ID: "changePassword", Tag: "sessions", Body: "PasswordRequest",
			Description: "Changes the signed-in user's password, given the current one, and ends the user's other sessions. " +
				"A password has 10 to 128 characters, is not the email, not one character repeated and not one of the most used passwords.",
			BodyExample: map[string]any{"current": "correct horse battery staple", "new": "four other unrelated words"},
			Answers:     []Answer{okAnswer(200, "Changed.", "EmptyResponse", nil)},
			Errors:      []int{400, 404, 413},
		}, Handler: s.changePassword},
	}
	return section{
		tags:   []openAPITag{{"sessions", "Sign in and out, sign up, and who you are. The console signs in here; programs use API keys."}},
		routes: routes,
		schemas: map[string]Schema{
			"SignInRequest": object("", false,
				req("email", str("The email address.")),
				req("password", str("The password."))),
			"SignUpRequest": object("", false,
				req("email", str("The email address to sign in with.").with("maxLength", push.MaxEmail)),
				req("password", str(fmt.Sprintf("A password of %d to %d characters, hard to guess.", push.MinPassword, push.MaxPassword)).with("minLength", push.MinPassword, "maxLength", push.MaxPassword)),
				opt("accountName", str("The new account's name (default: the email's name part).").with("maxLength", push.MaxName)),
				opt("invite", str("The invite code, when sign-up needs one."))),
			"PasswordRequest": object("", false,
				req("current", str("The current password.")),
				req("new", str(fmt.Sprintf("The new password: %d to %d characters.", push.MinPassword, push.MaxPassword)).with("minLength", push.MinPassword, "maxLength", push.MaxPassword))),
			"SignedIn": object("The signed-in user and the session.", true,
				req("user", ref("User")),
				req("session", ref("Session"))),
			"SignedInResponse": manageEnvelope("Signed in.", "SignedIn"),
			"Me": object("The caller.", true,
				req("account", ref("Account")),
				req("role", roleSchema()),
				req("user", ref("User").with("description", "The signed-in person; null for an API key.").orNullRef()),
				req("keyId", integer("The API key's id; null for a signed-in person.").orNull())),
			"MeResponse": manageEnvelope("The caller.", "Me"),
			"EmptyResponse": object("Done.", true,
				req("code", integer("0: done.").with("const", 0)),
				req("message", str("What was done.")),
				req("data", Schema{"type": "null"})),
		},
	}
}
