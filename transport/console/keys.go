package console

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
)

// API keys: the list, a new key (shown once), revoke.
func (c *Console) keyRoutes() {
	c.handle("GET /keys", c.page(c.keysPage))
	c.handle("POST /keys", c.page(c.createKey))
	c.handle("POST /keys/{id}/revoke", c.page(c.revokeKey))
}

// keysView is the list of keys, and a new key's plain text on the page
// that made it (never again).
type keysView struct {
	*frame
	Keys    []push.APIKey
	Next    string
	New     push.APIKey
	Plain   string
	Error   string
	Name    string
	Expires string
	Now     time.Time
}

// ExpiryChoices are the lifetimes a new key may have, in days (0: none).
func (v *keysView) ExpiryChoices() []int { return []int{0, 7, 30, 90, 365} }

func (c *Console) keysView(q *request) (*keysView, error) {
	pg, err := c.eng.Keys().List(q.r.Context(), q.p, push.KeyFilter{AccountID: q.p.AccountID, Limit: 100, Cursor: q.r.URL.Query().Get("cursor")})
	if err != nil {
		return nil, err
	}
	return &keysView{frame: c.newFrame(q, "keys.title", "keys"), Keys: pg.Items, Next: pg.Next, Now: time.Now()}, nil
}

func (c *Console) keysPage(q *request) error {
	v, err := c.keysView(q)
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "keys", v)
}

func (c *Console) createKey(q *request) error {
	name := strings.TrimSpace(q.r.PostFormValue("name"))
	days, err := strconv.Atoi(q.r.PostFormValue("expires"))
	if err != nil || days < 0 || days > 3650 {
		days = -1
	}
	var k push.APIKey
	var plain string
	if days < 0 {
		err = push.Errorf(push.Invalid, "invalid_expiry", "%s", q.lang.t("error.expiry"))
	} else {
		k, plain, err = c.eng.Keys().Create(q.r.Context(), q.p, push.KeyCreate{AccountID: q.p.AccountID, Name: name, TTL: time.Duration(days) * 24 * time.Hour})
	}
	v, verr := c.keysView(q)
	if verr != nil {
		return verr
	}
	if err != nil {
		v.Name, v.Expires = name, q.r.PostFormValue("expires")
		return c.formError(q, "keys", v, &v.Error, err)
	}
	v.New, v.Plain = k, plain
	return c.render(q, http.StatusCreated, "keys", v)
}

func (c *Console) revokeKey(q *request) error {
	id, err := pathID(q, "key")
	if err != nil {
		return err
	}
	if _, err := c.eng.Keys().Revoke(q.r.Context(), q.p, id); err != nil {
		return err
	}
	return q.redirect("/keys", "key_revoked")
}
