package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/push"
)

// Operators' pages: the accounts (make, suspend, activate, grant points)
// and the audit trail. The engine refuses a member (403).
func (c *Console) operatorRoutes() {
	c.handle("GET /ops/accounts", c.page(c.accountsPage))
	c.handle("POST /ops/accounts", c.page(c.createAccount))
	c.handle("POST /ops/accounts/{id}/status", c.page(c.setAccountStatus))
	c.handle("POST /ops/accounts/{id}/grant", c.page(c.grantPoints))
	c.handle("GET /ops/audit", c.page(c.auditPage))
}

// accountsView is every account.
type accountsView struct {
	*frame
	Accounts []push.Account
	Next     string
}

// needOperator refuses a member before anything is read: the operators'
// pages are not a member's, whatever they would show.
func needOperator(q *request) error {
	if q.p.Operator() {
		return nil
	}
	return push.Errorf(push.NotFound, "page_not_found", "there is no page here: check the address, or start from the dashboard")
}

func (c *Console) accountsPage(q *request) error {
	if err := needOperator(q); err != nil {
		return err
	}
	pg, err := c.eng.Accounts().List(q.r.Context(), q.p, push.AccountFilter{Limit: 100, Cursor: q.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "accounts", &accountsView{frame: c.newFrame(q, "accounts.title", "accounts"), Accounts: pg.Items, Next: pg.Next})
}

func (c *Console) createAccount(q *request) error {
	if err := needOperator(q); err != nil {
		return err
	}
	if _, err := c.eng.Accounts().Create(q.r.Context(), q.p, strings.TrimSpace(q.r.PostFormValue("name"))); err != nil {
		return err
	}
	return q.redirect("/ops/accounts", "account_created")
}

func (c *Console) setAccountStatus(q *request) error {
	if err := needOperator(q); err != nil {
		return err
	}
	id, err := pathID(q, "account")
	if err != nil {
		return err
	}
	st := push.AccountStatus(q.r.PostFormValue("status"))
	if _, err := c.eng.Accounts().Update(q.r.Context(), q.p, id, push.AccountUpdate{Status: &st}); err != nil {
		return err
	}
	return q.redirect("/ops/accounts", "account_"+string(st))
}

func (c *Console) grantPoints(q *request) error {
	if err := needOperator(q); err != nil {
		return err
	}
	id, err := pathID(q, "account")
	if err != nil {
		return err
	}
	amount, err := strconv.ParseInt(strings.TrimSpace(q.r.PostFormValue("amount")), 10, 64)
	if err != nil {
		return push.Errorf(push.Invalid, "invalid_amount", "%s", q.lang.t("error.amount"))
	}
	if _, err := c.eng.Ledger().Grant(q.r.Context(), q.p, id, amount, q.r.PostFormValue("reason")); err != nil {
		return err
	}
	return q.redirect("/ops/accounts", "points_granted")
}

// auditView is a page of the audit trail.
type auditView struct {
	*frame
	Entries []push.AuditEntry
	Next    string
}

func (c *Console) auditPage(q *request) error {
	if err := needOperator(q); err != nil {
		return err
	}
	pg, err := c.eng.Audit().List(q.r.Context(), q.p, push.AuditFilter{Limit: 100, Cursor: q.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "audit", &auditView{frame: c.newFrame(q, "audit.title", "audit"), Entries: pg.Items, Next: pg.Next})
}
