package transport

import (
	"fmt"
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// Jobs, as the management API lists and settles them.

type resolveRequest struct {
	Outcome string `json:"outcome"`
	Note    string `json:"note"`
}

func (s *Server) listManagedJobs(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	f := push.JobFilter{Limit: limit, Cursor: cursor, State: push.State(req.URL.Query().Get("state")), IdempotencyKey: req.URL.Query().Get("key")}
	if f.AccountID, err = queryID(req, "account"); err != nil {
		return err
	}
	if f.BotID, err = queryID(req, "bot"); err != nil {
		return err
	}
	if f.TargetID, err = queryID(req, "target"); err != nil {
		return err
	}
	if f.Since, err = queryTime(req, "since"); err != nil {
		return err
	}
	if f.Until, err = queryTime(req, "until"); err != nil {
		return err
	}
	page, err := s.eng.Jobs().List(req.Context(), principal(req), f)
	return writePage(w, page, err, newManagedJobView)
}

func (s *Server) getManagedJob(w http.ResponseWriter, req bunrouter.Request) error {
	j, err := s.eng.Jobs().Get(req.Context(), principal(req), req.Param("id"))
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newManagedJobView(j))
	return nil
}

func (s *Server) cancelManagedJob(w http.ResponseWriter, req bunrouter.Request) error {
	j, err := s.eng.Jobs().Cancel(req.Context(), principal(req), req.Param("id"))
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the job was canceled"+pointsNote(j), newManagedJobView(j))
	return nil
}

func pointsNote(j push.Job) string {
	if j.Cost > 0 {
		return " and its points were returned"
	}
	return ""
}

func (s *Server) resolveJob(w http.ResponseWriter, req bunrouter.Request) error {
	var body resolveRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	j, err := s.eng.Jobs().Resolve(req.Context(), principal(req), req.Param("id"), push.State(body.Outcome), body.Note)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the job was resolved as "+string(j.State), newManagedJobView(j))
	return nil
}

// manageJobSection is jobs as the management API lists and settles them.
func (s *Server) manageJobSection(p schemaParts) section {
	jobID := Param{Name: "id", In: "path", Required: true, Description: "The job's id.", Schema: str("A job id (UUID).").with("format", "uuid"), Example: exJobID}
	params := []Param{accountQuery(),
		{Name: "state", In: "query", Description: "Only jobs in this state.", Schema: str("").with("enum", jobStates()), Example: "uncertain"},
		{Name: "bot", In: "query", Description: "Only jobs of this bot.", Schema: integer("").with("minimum", 1)},
		{Name: "target", In: "query", Description: "Only jobs to this target.", Schema: integer("").with("minimum", 1)},
		{Name: "since", In: "query", Description: "Only jobs made at or after this time (RFC 3339).", Schema: str("").with("format", "date-time")},
		{Name: "until", In: "query", Description: "Only jobs made before this time (RFC 3339).", Schema: str("").with("format", "date-time")},
		{Name: "key", In: "query", Description: "Only the jobs of the send made with this Idempotency-Key.", Schema: str("").with("minLength", 1, "maxLength", push.MaxIdempotencyKey, "pattern", "^[A-Za-z0-9_:-]+$")},
	}
	routes := []Route{
		{Method: http.MethodGet, Path: managePrefix + "/jobs", Summary: "List jobs", Auth: true, Browser: true, Doc: Doc{
			ID: "listJobs", Tag: "manage-jobs", Params: append(params, pageParams()...),
			Description: "Jobs, newest first, narrowed by state, bot, target, time and Idempotency-Key. A member sees its account's; an operator any account's, or every one. " +
				"Pages stay stable while jobs are made: a new job comes before the first page.",
			Answers: []Answer{okAnswer(200, "A page of jobs.", "ManagedJobListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listManagedJobs},
		{Method: http.MethodGet, Path: managePrefix + "/jobs/:id", Summary: "Show a job and its history", Auth: true, Browser: true, Doc: Doc{
			ID: "getManagedJob", Tag: "manage-jobs", Params: []Param{jobID}, Description: "A job with what it sent, the platform's answer and the moves of its life.",
			Answers: []Answer{okAnswer(200, "The job.", "ManagedJobResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.getManagedJob},
		{Method: http.MethodPost, Path: managePrefix + "/jobs/:id/cancel", Summary: "Cancel a queued job", Auth: true, Browser: true, Doc: Doc{
			ID: "cancelManagedJob", Tag: "manage-jobs", Params: []Param{jobID}, Description: "Cancels a job still queued and returns its points; a job that started is 409 job_not_queued.",
			Answers: []Answer{okAnswer(200, "The canceled job.", "ManagedJobResponse", nil)}, Errors: []int{400, 404, 409},
		}, Handler: s.cancelManagedJob},
		{Method: http.MethodPost, Path: managePrefix + "/jobs/:id/resolve", Summary: "Resolve an uncertain job", Auth: true, Browser: true, Doc: Doc{
			ID: "resolveJob", Tag: "manage-jobs", Params: []Param{jobID}, Body: "ResolveRequest",
			Description: "Settles an uncertain job as succeeded or failed once you have checked on the platform what it received. Do not resend an uncertain message: " +
				"the platform may have it. The job keeps who resolved it, when, and the note.",
			BodyExample: map[string]any{"outcome": "succeeded", "note": "seen in the chat at 09:31"},
			Answers:     []Answer{okAnswer(200, "The resolved job.", "ManagedJobResponse", nil)}, Errors: []int{400, 404, 409, 413},
		}, Handler: s.resolveJob},
	}
	schemas := manageJobSchemas(p)
	schemas["ResolveRequest"] = object("", false,
		req("outcome", str("succeeded or failed: what the platform shows.").with("enum", []string{"succeeded", "failed"})),
		opt("note", str(fmt.Sprintf("What was checked (at most %d characters).", push.MaxNote)).with("maxLength", push.MaxNote)))
	return section{
		tags:    []openAPITag{{"manage-jobs", "Jobs: list them, read their history, cancel queued ones and resolve uncertain ones."}},
		routes:  routes,
		schemas: schemas,
	}
}
