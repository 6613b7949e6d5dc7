package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// Signing in and out, signing up, the password and the sessions.
func (c *Console) authRoutes() {
	c.handle("GET /signin", c.open(c.signInPage))
	c.handle("POST /signin", c.open(c.signIn))
	c.handle("GET /signup", c.open(c.signUpPage))
	c.handle("POST /signup", c.open(c.signUp))
	c.handle("POST /signout", c.page(c.signOut))
	c.handle("GET /account", c.page(c.accountPage))
	c.handle("POST /account/password", c.page(c.changePassword))
	c.handle("POST /account/name", c.page(c.renameAccount))
	c.handle("POST /account/sessions/{id}/end", c.page(c.endSession))
	c.handle("POST /account/sessions/end-all", c.page(c.endEverywhere))
}

// signView is the sign-in and the sign-up page.
type signView struct {
	*frame
	Email   string
	Next    string
	Error   string
	Ended   bool
	SignUp  push.SignUpMode
	Invite  string
	Account string
}

func (c *Console) signView(q *request, title string) *signView {
	v := &signView{frame: c.newFrame(q, title, ""), Next: localPath(q.r.URL.Query().Get("next")),
		SignUp: c.eng.Sessions().SignUpMode(), Ended: q.r.URL.Query().Get("ended") != ""}
	if q.r.URL.Query().Get("next") == "" {
		v.Next = ""
	}
	return v
}

func (c *Console) signInPage(q *request) error {
	if ck, err := q.r.Cookie(transport.SessionCookie); err == nil && ck.Value != "" {
		if _, err := c.eng.Sessions().Authenticate(q.r.Context(), ck.Value); err == nil {
			return q.redirect(localPath(q.r.URL.Query().Get("next")), "") // signed in already
		}
	}
	return c.render(q, http.StatusOK, "signin", c.signView(q, "signin.title"))
}

func (c *Console) signIn(q *request) error {
	v := c.signView(q, "signin.title")
	v.Email, v.Next = q.r.PostFormValue("email"), localPath(q.r.PostFormValue("next"))
	sess, token, _, err := c.eng.Sessions().SignIn(q.r.Context(), push.SignIn{Email: v.Email,
		Password: q.r.PostFormValue("password"), Address: clientAddress(q.r), Agent: q.r.UserAgent()})
	if err != nil {
		return c.formError(q, "signin", v, &v.Error, err)
	}
	c.setSessionCookie(q, token, sess.ExpiresAt)
	return q.redirect(v.Next, "")
}

func (c *Console) signUpPage(q *request) error {
	v := c.signView(q, "signup.title")
	v.Invite = q.r.URL.Query().Get("invite")
	status := http.StatusOK
	if v.SignUp == push.SignUpClosed {
		status = http.StatusForbidden
	}
	return c.render(q, status, "signup", v)
}

func (c *Console) signUp(q *request) error {
	v := c.signView(q, "signup.title")
	v.Email, v.Invite, v.Account = q.r.PostFormValue("email"), q.r.PostFormValue("invite"), q.r.PostFormValue("account")
	if pw := q.r.PostFormValue("password"); pw != q.r.PostFormValue("password2") {
		return c.formError(q, "signup", v, &v.Error, push.Errorf(push.Invalid, "passwords_differ", "%s", q.lang.t("error.passwords_differ")))
	}
	sess, token, _, err := c.eng.Sessions().SignUp(q.r.Context(), push.SignUp{
		SignIn:      push.SignIn{Email: v.Email, Password: q.r.PostFormValue("password"), Address: clientAddress(q.r), Agent: q.r.UserAgent()},
		AccountName: v.Account, Invite: v.Invite})
	if err != nil {
		return c.formError(q, "signup", v, &v.Error, err)
	}
	c.setSessionCookie(q, token, sess.ExpiresAt)
	return q.redirect("/", "welcome")
}

// formError shows a form's page again with the engine's refusal, for the
// refusals a person can fix on the form; others become the error page.
func (c *Console) formError(q *request, page string, view any, field *string, err error) error {
	switch push.KindOf(err) {
	case push.Invalid, push.Unauthenticated, push.Forbidden, push.Conflict, push.TooMany, push.PlatformFailed:
	default:
		return err
	}
	*field = err.Error()
	if pe, ok := err.(*push.Error); ok && pe.Message != "" {
		*field = pe.Message
	}
	return c.render(q, transport.StatusOf(push.KindOf(err)), page, view)
}

func (c *Console) signOut(q *request) error {
	if err := c.eng.Sessions().SignOut(q.r.Context(), q.p, 0); err != nil {
		return err
	}
	c.clearCookie(q.w, q.r, transport.SessionCookie)
	return q.redirect("/signin", "")
}

// accountView is the page of one's own sign-in: the password and the
// sessions.
type accountView struct {
	*frame
	Account  push.Account
	User     push.User
	Sessions []push.Session
	Current  int64
	Error    string
}

func (c *Console) accountPage(q *request) error {
	v, err := c.accountView(q)
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "account", v)
}

func (c *Console) accountView(q *request) (*accountView, error) {
	ctx := q.r.Context()
	u, err := c.eng.Users().Me(ctx, q.p)
	if err != nil {
		return nil, err
	}
	ss, err := c.eng.Sessions().List(ctx, q.p, push.SessionFilter{Limit: 50})
	if err != nil {
		return nil, err
	}
	live := ss.Items[:0]
	for _, s := range ss.Items {
		if s.RevokedAt.IsZero() {
			live = append(live, s)
		}
	}
	a, err := c.eng.Accounts().Get(ctx, q.p, q.p.AccountID)
	if err != nil {
		return nil, err
	}
	u.PasswordHash = ""
	return &accountView{frame: c.newFrame(q, "account.title", "account"), Account: a, User: u, Sessions: live, Current: q.p.SessionID}, nil
}

func (c *Console) changePassword(q *request) error {
	next := q.r.PostFormValue("new")
	var err error
	if next != q.r.PostFormValue("new2") {
		err = push.Errorf(push.Invalid, "passwords_differ", "%s", q.lang.t("error.passwords_differ"))
	} else {
		err = c.eng.Users().ChangePassword(q.r.Context(), q.p, q.r.PostFormValue("current"), next)
	}
	if err != nil {
		v, verr := c.accountView(q)
		if verr != nil {
			return verr
		}
		return c.formError(q, "account", v, &v.Error, err)
	}
	return q.redirect("/account", "password")
}

func (c *Console) renameAccount(q *request) error {
	name := strings.TrimSpace(q.r.PostFormValue("name"))
	if _, err := c.eng.Accounts().Update(q.r.Context(), q.p, q.p.AccountID, push.AccountUpdate{Name: &name}); err != nil {
		v, verr := c.accountView(q)
		if verr != nil {
			return verr
		}
		return c.formError(q, "account", v, &v.Error, err)
	}
	return q.redirect("/account", "account_renamed")
}

func (c *Console) endSession(q *request) error {
	id, err := pathID(q, "session")
	if err != nil {
		return err
	}
	if id == q.p.SessionID {
		return c.signOut(q)
	}
	if err := c.eng.Sessions().SignOut(q.r.Context(), q.p, id); err != nil {
		return err
	}
	return q.redirect("/account", "session_ended")
}

func (c *Console) endEverywhere(q *request) error {
	if err := c.eng.Sessions().SignOutEverywhere(q.r.Context(), q.p); err != nil {
		return err
	}
	c.clearCookie(q.w, q.r, transport.SessionCookie)
	return q.redirect("/signin", "")
}

// pathID reads a page's {id}.
func pathID(q *request, what string) (int64, error) {
	raw := q.r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, push.Errorf(push.NotFound, "page_not_found", "there is no %s %q: check the address", what, truncate(raw, 40))
	}
	return id, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
