package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldpush/herald/push"
)

// Jobs: the filtered list, a job's page, cancel, resolve.
func (c *Console) jobRoutes() {
	c.handle("GET /jobs", c.page(c.jobsPage))
	c.handle("GET /jobs/{id}", c.page(c.jobPage))
	c.handle("GET /jobs/{id}/state", c.page(c.jobState))
	c.handle("POST /jobs/{id}/cancel", c.page(c.cancelJob))
	c.handle("POST /jobs/{id}/resolve", c.page(c.resolveJob))
}

// jobFilter is the list's filter as the form gives it.
type jobFilter struct {
	State, Bot, Target, Since, Until, Key string
	Account                               string // operators: an account's jobs ("" their own, "all" every account's)
}

// jobsView is a page of jobs.
type jobsView struct {
	*frame
	Filter jobFilter
	States []push.State
	Bots   []push.Bot
	Jobs   []push.Job
	Next   string // the next page's URL; empty on the last
}

// dateLayout is the date inputs' format; the days are UTC.
const dateLayout = "2006-01-02"

func (c *Console) jobsPage(q *request) error {
	ctx := q.r.Context()
	qs := q.r.URL.Query()
	fv := jobFilter{State: qs.Get("state"), Bot: qs.Get("bot"), Target: qs.Get("target"), Since: qs.Get("since"), Until: qs.Get("until"), Key: qs.Get("key")}
	f := push.JobFilter{AccountID: q.p.AccountID, State: push.State(fv.State), IdempotencyKey: fv.Key, Limit: 50, Cursor: qs.Get("cursor")}
	var err error
	if q.p.Operator() {
		switch fv.Account = qs.Get("account"); fv.Account {
		case "":
		case "all":
			f.AccountID = 0
		default:
			if f.AccountID, err = optionalID(fv.Account, q.lang.t("people.account")); err != nil {
				return err
			}
		}
	}
	if f.BotID, err = optionalID(fv.Bot, q.lang.t("jobs.bot")); err != nil {
		return err
	}
	if f.TargetID, err = optionalID(fv.Target, q.lang.t("jobs.target")); err != nil {
		return err
	}
	// A filter naming another account's bot or target is a page that
	// does not exist for this account, like the object's own page.
	if f.BotID != 0 {
		if _, err := c.eng.Bots().Get(ctx, q.p, f.BotID); err != nil {
			return err
		}
	}
	if f.TargetID != 0 {
		if _, err := c.eng.Targets().Get(ctx, q.p, f.TargetID); err != nil {
			return err
		}
	}
	if f.Since, err = optionalDay(fv.Since, q.lang.t("jobs.since")); err != nil {
		return err
	}
	if f.Until, err = optionalDay(fv.Until, q.lang.t("jobs.until")); err != nil {
		return err
	}
	if !f.Until.IsZero() {
		f.Until = f.Until.Add(24 * time.Hour) // the whole last day
	}
	pg, err := c.eng.Jobs().List(ctx, q.p, f)
	if err != nil {
		return err
	}
	bots, err := c.eng.Bots().List(ctx, q.p, push.BotFilter{AccountID: q.p.AccountID, Limit: push.MaxPageSize})
	if err != nil {
		return err
	}
	v := &jobsView{frame: c.newFrame(q, "jobs.title", "jobs"), Filter: fv, States: push.States(), Bots: bots.Items, Jobs: pg.Items}
	for i := range v.Bots {
		v.Bots[i].Config = nil
	}
	if pg.Next != "" {
		next := url.Values{}
		for k, vs := range qs {
			if k != "cursor" && k != "done" && len(vs) > 0 && vs[0] != "" {
				next.Set(k, vs[0])
			}
		}
		next.Set("cursor", pg.Next)
		v.Next = "/jobs?" + next.Encode()
	}
	return c.render(q, http.StatusOK, "jobs", v)
}

func optionalID(s, what string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, push.Errorf(push.Invalid, "invalid_filter", "%s %q is not an id: give a positive number, or leave it empty", what, truncate(s, 40))
	}
	return id, nil
}

func optionalDay(s, what string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, push.Errorf(push.Invalid, "invalid_filter", "%s %q is not a date: give one as 2026-11-24, or leave it empty", what, truncate(s, 40))
	}
	return t, nil
}

// jobView is a job's page.
type jobView struct {
	*frame
	Job     push.Job
	History []push.JobEvent
	Error   string
	// BotName and TargetName name the job's bot and target while they
	// exist (a deleted bot or an unbound target keeps its jobs).
	BotName, TargetName string
}

// jobView makes a job's page, naming its bot and target.
func (c *Console) jobView(q *request, j push.Job) *jobView {
	v := &jobView{frame: c.newFrame(q, "job.title", "jobs"), Job: j, History: j.History()}
	ctx := q.r.Context()
	if b, err := c.eng.Bots().Get(ctx, q.p, j.BotID); err == nil {
		v.BotName = b.Name
	}
	if j.TargetID != 0 {
		if t, err := c.eng.Targets().Get(ctx, q.p, j.TargetID); err == nil {
			v.TargetName = targetLabel(t)
		}
	}
	return v
}

func (c *Console) job(q *request) (push.Job, error) {
	return c.eng.Jobs().Get(q.r.Context(), q.p, q.r.PathValue("id"))
}

func (c *Console) jobPage(q *request) error {
	j, err := c.job(q)
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "job", c.jobView(q, j))
}

// jobState answers the job page's script: the job's state, so the page
// reloads when it moves.
func (c *Console) jobState(q *request) error {
	j, err := c.job(q)
	if err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(q.w).Encode(map[string]string{"state": string(j.State)})
}

func (c *Console) cancelJob(q *request) error {
	j, err := c.job(q)
	if err != nil {
		return err
	}
	if _, err := c.eng.Jobs().Cancel(q.r.Context(), q.p, j.ID); err != nil {
		v := c.jobView(q, j)
		return c.formError(q, "job", v, &v.Error, err)
	}
	return q.redirect("/jobs/"+url.PathEscape(j.ID), "job_canceled")
}

func (c *Console) resolveJob(q *request) error {
	j, err := c.job(q)
	if err != nil {
		return err
	}
	outcome := push.State(q.r.PostFormValue("outcome"))
	if _, err := c.eng.Jobs().Resolve(q.r.Context(), q.p, j.ID, outcome, q.r.PostFormValue("note")); err != nil {
		v := c.jobView(q, j)
		return c.formError(q, "job", v, &v.Error, err)
	}
	return q.redirect("/jobs/"+url.PathEscape(j.ID), "job_resolved")
}
