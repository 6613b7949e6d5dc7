package console

import (
	"net/http"
	"time"

	"github.com/heraldpush/herald/push"
)

// The dashboard and the points.
func (c *Console) homeRoutes() {
	c.handle("GET /{$}", c.page(c.dashboard))
	c.handle("GET /points", c.page(c.pointsPage))
}

// stateCount is how many of today's jobs are in a state.
type stateCount struct {
	State push.State
	Count int
}

// dashboardView is the dashboard.
type dashboardView struct {
	*frame
	Account   push.Account
	Today     []stateCount
	Uncertain []push.Job
	Failed    []push.Job
}

func (c *Console) dashboard(q *request) error {
	ctx := q.r.Context()
	a, err := c.eng.Accounts().Get(ctx, q.p, q.p.AccountID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	since := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	v := &dashboardView{frame: c.newFrame(q, "dashboard.title", "dashboard"), Account: a}
	counts, err := c.eng.Jobs().Count(ctx, q.p, push.JobCountFilter{AccountID: q.p.AccountID, Since: since})
	if err != nil {
		return err
	}
	for _, s := range push.States() {
		v.Today = append(v.Today, stateCount{State: s, Count: counts[s]})
	}
	unc, err := c.eng.Jobs().List(ctx, q.p, push.JobFilter{AccountID: q.p.AccountID, State: push.StateUncertain, Limit: 10})
	if err != nil {
		return err
	}
	failed, err := c.eng.Jobs().List(ctx, q.p, push.JobFilter{AccountID: q.p.AccountID, State: push.StateFailed, Since: since, Limit: 10})
	if err != nil {
		return err
	}
	v.Uncertain, v.Failed = unc.Items, failed.Items
	return c.render(q, http.StatusOK, "dashboard", v)
}

// pointsView is the balance and the ledger.
type pointsView struct {
	*frame
	Account push.Account
	Entries []push.LedgerEntry
	Next    string
}

func (c *Console) pointsPage(q *request) error {
	ctx := q.r.Context()
	a, err := c.eng.Accounts().Get(ctx, q.p, q.p.AccountID)
	if err != nil {
		return err
	}
	pg, err := c.eng.Ledger().List(ctx, q.p, push.LedgerFilter{AccountID: q.p.AccountID, Limit: 50, Cursor: q.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "points", &pointsView{frame: c.newFrame(q, "points.title", "points"), Account: a, Entries: pg.Items, Next: pg.Next})
}
