package console

import (
	"context"
	"net/http"
	"sort"
)

// Number is one of the service's numbers on the health page, as /metrics
// serves it: a metric's name, its labels (platform="telegram"), its value.
type Number struct {
	Name   string
	Labels string
	Value  float64
}

// healthView is the operators' health page.
type healthView struct {
	*frame
	Numbers []Number
	Missing bool // the server has no metrics to show
}

func (c *Console) healthRoutes() {
	c.handle("GET /ops/health", c.page(c.healthPage))
}

func (c *Console) healthPage(q *request) error {
	if err := needOperator(q); err != nil {
		return err
	}
	v := &healthView{frame: c.newFrame(q, "health.title", "health")}
	if c.health == nil {
		v.Missing = true
		return c.render(q, http.StatusOK, "health", v)
	}
	ctx, cancel := context.WithCancel(q.r.Context())
	defer cancel()
	ns, err := c.health(ctx)
	if err != nil {
		return err
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].Name < ns[j].Name })
	v.Numbers = ns
	return c.render(q, http.StatusOK, "health", v)
}
