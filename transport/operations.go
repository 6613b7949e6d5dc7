package transport

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/uptrace/bunrouter"
)

// ReadyCheck is one dependency that /readyz checks: the database always
// (through the engine), and what the binary adds (Redis, where
// configured).
type ReadyCheck struct {
	// Name labels the check in the answer ("database", "redis").
	Name string
	// Check reports whether the dependency answers; it must honour ctx.
	Check func(ctx context.Context) error
}

// readyTimeout bounds each readiness check.
const readyTimeout = 2 * time.Second

// readyRetry is the Retry-After of a 503 from /readyz, in seconds.
const readyRetry = 5

type healthBody struct {
	Status string `json:"status"`
}

type readyBody struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// healthz answers 200 while the process is up.
func (s *Server) healthz(w http.ResponseWriter, req bunrouter.Request) error {
	writeJSON(w, http.StatusOK, healthBody{Status: "ok"})
	return nil
}

// readyz answers 200 when every dependency answers and the engine takes
// sends, else 503 with Retry-After. A failing check's error is logged,
// not answered: it may name hosts and users.
func (s *Server) readyz(w http.ResponseWriter, req bunrouter.Request) error {
	body := readyBody{Status: "ready", Checks: make(map[string]string, len(s.ready))}
	for _, c := range s.ready {
		ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
		err := c.Check(ctx)
		cancel()
		if err != nil {
			s.log.Warn("readiness check failed", "check", c.Name, "err", err)
			body.Checks[c.Name] = "failing"
			body.Status = "unavailable"
			continue
		}
		body.Checks[c.Name] = "ok"
	}
	if body.Status == "ready" && s.eng.Draining() {
		body.Status = "draining"
	}
	status := http.StatusOK
	if body.Status != "ready" {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.Itoa(readyRetry))
		infoOf(req.Context()).reason = body.Status
	}
	writeJSON(w, status, body)
	return nil
}

// serveMetrics answers the metrics, when the server has them.
func (s *Server) serveMetrics(w http.ResponseWriter, req bunrouter.Request) error {
	if s.metrics == nil {
		return &httpError{http.StatusNotFound, "metrics_disabled", "metrics are not enabled on this server"}
	}
	s.metrics.ServeHTTP(w, req.Request)
	return nil
}
