package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
)

// People: the users of the account (operators: every account's) and the
// invites that let people sign up into it.
func (c *Console) peopleRoutes() {
	c.handle("GET /people", c.page(c.peoplePage))
	c.handle("POST /invites", c.page(c.createInvite))
	c.handle("POST /invites/{id}/revoke", c.page(c.revokeInvite))
	c.handle("POST /users/{id}/remove", c.page(c.removeUser))
	c.handle("POST /users/{id}/password", c.page(c.resetPassword))
}

// peopleView is the users and the invites, and a new invite's code on the
// page that made it (never again).
type peopleView struct {
	*frame
	Users   []push.User
	Invites []push.Invite
	Now     time.Time
	Code    string
	Link    string
	Email   string
	Error   string
	// Reset is the user whose password was reset, and Password the new
	// one, on the page that reset it (never again).
	Reset    push.User
	Password string
	Self     int64 // the signed-in user
}

func (c *Console) peopleView(q *request) (*peopleView, error) {
	ctx := q.r.Context()
	account := q.p.AccountID
	if q.p.Operator() {
		account = 0 // every account's people and invites
	}
	us, err := c.eng.Users().List(ctx, q.p, push.UserFilter{AccountID: account, Limit: push.MaxPageSize})
	if err != nil {
		return nil, err
	}
	is, err := c.eng.Invites().List(ctx, q.p, push.InviteFilter{AccountID: account, Limit: 100})
	if err != nil {
		return nil, err
	}
	for i := range us.Items {
		us.Items[i].PasswordHash = "" // never rendered, not even by mistake
	}
	return &peopleView{frame: c.newFrame(q, "people.title", "people"), Users: us.Items, Invites: is.Items, Now: time.Now(), Self: q.p.UserID}, nil
}

func (c *Console) peoplePage(q *request) error {
	v, err := c.peopleView(q)
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "people", v)
}

func (c *Console) createInvite(q *request) error {
	email := strings.TrimSpace(q.r.PostFormValue("email"))
	inv := push.InviteCreate{AccountID: q.p.AccountID, Email: email}
	if q.p.Operator() && q.r.PostFormValue("new_account") != "" {
		inv.AccountID = 0
	}
	_, code, err := c.eng.Invites().Create(q.r.Context(), q.p, inv)
	v, verr := c.peopleView(q)
	if verr != nil {
		return verr
	}
	if err != nil {
		v.Email = email
		return c.formError(q, "people", v, &v.Error, err)
	}
	v.Code, v.Link = code, c.origin(q.r)+"/signup?invite="+url.QueryEscape(code)
	return c.render(q, http.StatusCreated, "people", v)
}

func (c *Console) revokeInvite(q *request) error {
	id, err := pathID(q, "invite")
	if err != nil {
		return err
	}
	if _, err := c.eng.Invites().Revoke(q.r.Context(), q.p, id); err != nil {
		return err
	}
	return q.redirect("/people", "invite_revoked")
}

// origin is where people reach the server: the public URL, else the
// request's own scheme and host.
func (c *Console) origin(r *http.Request) string {
	if c.publicURL != "" {
		return strings.TrimRight(c.publicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (c *Console) removeUser(q *request) error {
	id, err := pathID(q, "user")
	if err != nil {
		return err
	}
	if id == q.p.UserID {
		return push.Errorf(push.Invalid, "remove_self", "%s", q.lang.t("error.remove_self"))
	}
	if err := c.eng.Users().Remove(q.r.Context(), q.p, id); err != nil {
		return err
	}
	return q.redirect("/people", "user_removed")
}

// resetPassword gives a user a new password (operators), shown once; the
// user's sessions end.
func (c *Console) resetPassword(q *request) error {
	id, err := pathID(q, "user")
	if err != nil {
		return err
	}
	ctx := q.r.Context()
	u, err := c.eng.Users().Get(ctx, q.p, id)
	if err != nil {
		return err
	}
	pw, err := c.eng.Users().ResetPassword(ctx, q.p, id)
	if err != nil {
		return err
	}
	v, err := c.peopleView(q)
	if err != nil {
		return err
	}
	u.PasswordHash = ""
	v.Reset, v.Password = u, pw
	return c.render(q, http.StatusOK, "people", v)
}
