package transport

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/uptrace/bunrouter"
)

// Route is one endpoint: what the router serves and what the API
// documents (the OpenAPI document and the docs page) say about it. The
// server and the documents are built from one table, so neither can list
// an endpoint the other lacks.
type Route struct {
	Method string
	// Path is the full path pattern in the router's syntax, e.g.
	// /api/openapi/queue/:id.
	Path    string
	Summary string
	// Auth says the route needs an API key and counts against its rate
	// limit.
	Auth    bool
	Doc     Doc
	Handler bunrouter.HandlerFunc
}

// Doc documents a route.
type Doc struct {
	// ID is the operationId, and the anchor of the route on the docs page.
	ID string
	// Tag groups routes: "send", "jobs" or "operations".
	Tag         string
	Description string
	Params      []Param
	// Idempotent routes take an Idempotency-Key header.
	Idempotent bool
	// Body names the component schema of the JSON request body.
	Body        string
	BodyExample any
	// Answers are the route's success answers (and, for operator routes,
	// all of them).
	Answers []Answer
	// Errors are the refusals the route itself can answer. Routes that
	// need a key can also answer 401, 403, 429, 500 and 503.
	Errors []int
}

// Param is a path or query parameter.
type Param struct {
	Name        string
	In          string // "path" or "query"
	Description string
	Required    bool
	Schema      Schema
	Example     string
}

// Answer is one documented response.
type Answer struct {
	Status      int
	Description string
	// ContentType defaults to application/json.
	ContentType string
	// Schema names a component schema, or is empty for a body the
	// document does not describe field by field.
	Schema  string
	Example any
	// Headers names response headers of the components (beyond
	// X-Request-Id, which every answer has).
	Headers []string
}

// apiPrefix is where the endpoints of the HTTP contract live.
const apiPrefix = BasePath + "/openapi"

const (
	jsonType = "application/json"
	exJobID  = "0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10"
	exTime   = "2026-11-21T09:30:00.125Z"
)

// routes is the route table: every endpoint of the HTTP contract, the
// cancel extension, and the operator endpoints.
func (s *Server) routes() []Route {
	l := s.eng.Limits()
	sync := duration(l.SyncWait)
	// The headers of every answer to a request with a key, and of a send's.
	rateHeaders := rateLimitHeaders()
	sendHeaders := append(append([]string{}, rateHeaders...), "Idempotency-Replay")
	exRecord := func(status string, pending, uncertain bool, index, errText string) map[string]any {
		m := map[string]any{"id": 42, "bot": 1, "user": 1, "content": "**deployed** v42", "msg_type": 2, "status": status,
			"platformIndex": index, "jobId": exJobID, "pending": pending, "uncertain": uncertain}
		if errText != "" {
			m["error"] = errText
		}
		return m
	}
	exJob := func(status string, success any, startedAt, finishedAt any) map[string]any {
		m := map[string]any{"jobId": exJobID, "status": status, "success": success, "pending": status == "queued" || status == "running",
			"uncertain": status == "uncertain", "messageId": 42, "botId": 1, "targetId": 7, "msgType": 2,
			"platformIndex": "", "attempts": 0, "createdAt": exTime, "updatedAt": exTime, "startedAt": startedAt, "finishedAt": finishedAt}
		if status == "succeeded" {
			m["platformIndex"], m["attempts"] = "123456789:17", 1
		}
		return m
	}
	single := []Answer{
		{Status: 200, Description: "Delivered (status SUCCESS). A replay of a send that was canceled or expired also answers 200, with that status.",
			Schema: "SendResponse", Headers: sendHeaders,
			Example: map[string]any{"code": 0, "message": "", "data": exRecord("SUCCESS", false, false, "123456789:17", "")}},
		{Status: 202, Description: fmt.Sprintf("Not finished within the synchronous wait (%s): pending=true and a jobId; or uncertain=true when the platform may have received it. Neither is delivered: query the job, do not resend.", sync),
			Schema: "SendResponse", Headers: sendHeaders,
			Example: map[string]any{"code": 0, "message": "the message is still being sent: track it with GET /api/openapi/queue/" + exJobID + " and do not resend it",
				"data": exRecord("QUEUED", true, false, "", "")}},
	}
	sendErrors := []int{400, 404, 409, 413}
	batchAnswers := func(schema string, done, pending any) []Answer {
		return []Answer{
			{Status: 200, Description: "Every item is settled; read every element of results (an item may have failed or be uncertain).", Schema: schema, Headers: sendHeaders, Example: done},
			{Status: 202, Description: fmt.Sprintf("Some items are not finished after the synchronous wait (%s in all): they carry a jobId; track each.", sync), Schema: schema, Headers: sendHeaders, Example: pending},
		}
	}
	batchItem := func(target int, status string, success, pending bool) map[string]any {
		return map[string]any{"target_id": target, "success": success, "message_id": 40 + target, "jobId": exJobID,
			"status": status, "pending": pending, "uncertain": false}
	}
	multiItem := func(bot int, target, status string) map[string]any {
		return map[string]any{"botId": bot, "target": target, "status": status, "message_id": 50, "jobId": exJobID}
	}
	jobIDParam := Param{Name: "id", In: "path", Required: true, Example: exJobID,
		Description: "The jobId from a send's answer.", Schema: str("A job id (UUID).").with("format", "uuid")}
	ready := Answer{Status: 200, Description: "Ready: the database (and Redis, where configured) answers.", Schema: "Readiness",
		Example: map[string]any{"status": "ready", "checks": map[string]any{"database": "ok"}}}
	return []Route{
		{http.MethodPost, apiPrefix + "/v1/push/private", "Send one message (recommended)", true, Doc{
			ID: "sendPrivate", Tag: "send", Idempotent: true, Body: "PrivateSendRequest",
			Description: fmt.Sprintf("Sends one message to one bound target. Send an Idempotency-Key for every logical push. "+
				"If the send is not finished within %s, the answer is 202 with pending=true and a jobId: track it with the job query and do not resend under a new key.", sync),
			BodyExample: map[string]any{"botId": 1, "target": "7", "content": "**deployed** v42", "msgType": 2},
			Answers:     single, Errors: sendErrors,
		}, s.sendPrivate},
		{http.MethodPost, apiPrefix + "/send", "Send one message (compatibility)", true, Doc{
			ID: "sendCompat", Tag: "send", Idempotent: true, Body: "CompatSendRequest",
			Description: "The single send with the older parameter names (bot_id, target_id, msg_type, image_url). " +
				"It is the same kind of request as the recommended endpoint: a key used on one replays on the other. New projects use POST /api/openapi/v1/push/private.",
			BodyExample: map[string]any{"bot_id": 1, "target_id": 7, "content": "**deployed** v42", "msg_type": 2},
			Answers:     single, Errors: sendErrors,
		}, s.sendCompat},
		{http.MethodPost, apiPrefix + "/batch-send", "Batch send to several targets of one bot", true, Doc{
			ID: "batchSend", Tag: "send", Idempotent: true, Body: "BatchSendRequest",
			Description: fmt.Sprintf("Sends one message to up to %d targets of one bot. The answer waits at most %s in total; unfinished items carry a jobId and the status queued. "+
				"Platforms without targets are sent to with a single send. A replayed key needs the identical message and target list.", l.MaxTargets, sync),
			BodyExample: map[string]any{"bot_id": 1, "target_ids": []int{7, 8}, "content": "hello all"},
			Answers: batchAnswers("BatchSendResponse",
				map[string]any{"code": 0, "message": "2 succeeded, 0 failed, 0 pending, 0 uncertain", "data": map[string]any{
					"total": 2, "success": 2, "failed": 0, "results": []any{batchItem(7, "succeeded", true, false), batchItem(8, "succeeded", true, false)}}},
				map[string]any{"code": 0, "message": "1 succeeded, 0 failed, 1 pending, 0 uncertain", "data": map[string]any{
					"total": 2, "success": 1, "failed": 0, "results": []any{batchItem(7, "succeeded", true, false), batchItem(8, "queued", false, true)}}}),
			Errors: sendErrors,
		}, s.batchSend},
		{http.MethodPost, apiPrefix + "/v1/push/batch", "Batch send across several bots", true, Doc{
			ID: "multiSend", Tag: "send", Idempotent: true, Body: "MultiSendRequest",
			Description: fmt.Sprintf("Sends one message to targets of several bots: each group names a bot and a non-empty targets list, at most %d targets in all. "+
				"The answer counts pending and uncertain items apart and gives each unfinished item its jobId. A queued item is not a delivered item.", l.MaxTargets),
			BodyExample: map[string]any{"bots": []any{map[string]any{"botId": 1, "targets": []string{"7", "8"}}, map[string]any{"botId": 2, "targets": []string{"9"}}}, "content": "hello", "msgType": 0},
			Answers: batchAnswers("MultiSendResponse",
				map[string]any{"code": 0, "message": "3 succeeded, 0 failed, 0 pending, 0 uncertain", "data": map[string]any{
					"total": 3, "success_count": 3, "fail_count": 0, "pending_count": 0, "uncertain_count": 0,
					"results": []any{multiItem(1, "7", "success"), multiItem(1, "8", "success"), multiItem(2, "9", "success")}}},
				map[string]any{"code": 0, "message": "2 succeeded, 0 failed, 1 pending, 0 uncertain", "data": map[string]any{
					"total": 3, "success_count": 2, "fail_count": 0, "pending_count": 1, "uncertain_count": 0,
					"results": []any{multiItem(1, "7", "success"), multiItem(1, "8", "success"), multiItem(2, "9", "pending")}}}),
			Errors: sendErrors,
		}, s.multiSend},
		{http.MethodGet, apiPrefix + "/queue/:id", "Query a job", true, Doc{
			ID: "queryJob", Tag: "jobs", Params: []Param{jobIDParam},
			Description: "Returns a job of the key's account; a job of another account is 404.",
			Answers: []Answer{{Status: 200, Description: "The job.", Schema: "JobResponse", Headers: rateHeaders,
				Example: map[string]any{"code": 0, "message": "", "data": exJob("succeeded", true, exTime, exTime)}}},
			Errors: []int{400, 404},
		}, s.queryJob},
		{http.MethodGet, apiPrefix + "/queue-request", "Recover a single send by its Idempotency-Key", true, Doc{
			ID: "queueRequest", Tag: "jobs",
			Params: []Param{{Name: "key", In: "query", Required: true, Example: "deploy-42",
				Description: "The Idempotency-Key used in the single send.", Schema: str("An Idempotency-Key.").with("pattern", "^[A-Za-z0-9_:-]{1,100}$")}},
			Description: "Recovers a single send after a lost connection, by its Idempotency-Key. When no record is found, data is null and the original request may be resubmitted with the original key. " +
				"Batch sends are not recovered this way (400 batch_key): use the jobId of each item.",
			Answers: []Answer{{Status: 200, Description: "The send's job and message record, or data null when the key was never used (or is past the retention).",
				Schema: "QueueRequestResponse", Headers: rateHeaders,
				Example: map[string]any{"code": 0, "message": "", "data": func() map[string]any {
					m := exJob("succeeded", true, exTime, exTime)
					m["idempotencyKey"] = "deploy-42"
					m["record"] = exRecord("SUCCESS", false, false, "123456789:17", "")
					return m
				}()}}},
			Errors: []int{400},
		}, s.queryByKey},
		{http.MethodPost, apiPrefix + "/queue/:id/cancel", "Cancel a queued job (extension)", true, Doc{
			ID: "cancelJob", Tag: "jobs", Params: []Param{jobIDParam},
			Description: "Cancels a job that is still queued and returns its points. A job that already started (or settled) cannot be canceled: 409 job_not_queued.",
			Answers: []Answer{{Status: 200, Description: "The job, now canceled.", Schema: "JobResponse", Headers: rateHeaders,
				Example: map[string]any{"code": 0, "message": "the job was canceled and its points were returned", "data": func() map[string]any {
					m := exJob("canceled", false, nil, exTime)
					m["error"] = "canceled by the caller"
					return m
				}()}}},
			Errors: []int{400, 404, 409},
		}, s.cancelJob},
		{http.MethodGet, BasePath + "/openapi.json", "This API's OpenAPI document", false, Doc{
			ID: "openAPI", Tag: "operations", Description: "The OpenAPI 3.1 document of every endpoint. No key needed.",
			Answers: []Answer{{Status: 200, Description: "The OpenAPI document.", Schema: "", Example: nil}},
		}, s.serveOpenAPI},
		{http.MethodGet, BasePath + "/docs", "This API's documentation page", false, Doc{
			ID: "docs", Tag: "operations", Description: "This page: the API documentation, readable without a key and without any other network access.",
			Answers: []Answer{{Status: 200, Description: "An HTML page.", ContentType: "text/html"}},
		}, s.serveDocs},
		{http.MethodGet, "/healthz", "Liveness probe", false, Doc{
			ID: "healthz", Tag: "operations", Description: "Answers 200 while the process is up (also while it drains).",
			Answers: []Answer{{Status: 200, Description: "The process is up.", Schema: "Health", Example: map[string]any{"status": "ok"}}},
		}, s.healthz},
		{http.MethodGet, "/readyz", "Readiness probe", false, Doc{
			ID: "readyz", Tag: "operations",
			Description: "Answers 200 when this process can take traffic: the database answers (and Redis, where configured). " +
				"It answers 503 with Retry-After while the process drains (stops taking sends) or when a dependency is down.",
			Answers: []Answer{ready,
				{Status: 503, Description: "Not ready: draining, or a dependency is down.", Schema: "Readiness", Headers: []string{"Retry-After"},
					Example: map[string]any{"status": "unavailable", "checks": map[string]any{"database": "failing"}}}},
		}, s.readyz},
		{http.MethodGet, "/metrics", "Prometheus metrics", false, Doc{
			ID: "metrics", Tag: "operations",
			Description: "Metrics in the Prometheus text format: requests by route and status with latencies, jobs by platform and state, the backlog, platform call latencies, points charged and refunded, idempotent replays and rate-limit refusals.",
			Answers: []Answer{{Status: 200, Description: "The metrics.", ContentType: "text/plain"},
				{Status: 404, Description: "Metrics are not enabled on this server.", Schema: "Error"}},
		}, s.serveMetrics},
	}
}

// Routes lists the endpoints (without their handlers).
func (s *Server) Routes() []Route {
	rs := s.routes()
	for i := range rs {
		rs[i].Handler = nil
	}
	return rs
}

// openAPIPath turns a router path (/queue/:id) into an OpenAPI one
// (/queue/{id}).
func openAPIPath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if strings.HasPrefix(part, ":") {
			parts[i] = "{" + part[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
