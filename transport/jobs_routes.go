package transport

import (
	"net/http"

	"github.com/heraldpush/herald/push"
)

// exJob is an example job.
func exJob(status string, success any, startedAt, finishedAt any) map[string]any {
	m := map[string]any{"jobId": exJobID, "status": status, "success": success, "pending": status == "queued" || status == "running",
		"uncertain": status == "uncertain", "messageId": 42, "botId": 1, "targetId": 7, "msgType": 2,
		"platformIndex": "", "attempts": 0, "createdAt": exTime, "updatedAt": exTime, "startedAt": startedAt, "finishedAt": finishedAt}
	if status == "succeeded" {
		m["platformIndex"], m["attempts"] = "123456789:17", 1
	}
	return m
}

// jobSection is the job routes: query, recover by key, cancel.
func (s *Server) jobSection(p schemaParts) section {
	jobIDParam := Param{Name: "id", In: "path", Required: true, Example: exJobID,
		Description: "The jobId from a send's answer.", Schema: str("A job id (UUID).").with("format", "uuid")}
	routes := []Route{
		{Method: http.MethodGet, Path: apiPrefix + "/queue/:id", Summary: "Query a job", Auth: true, Doc: Doc{
			ID: "queryJob", Tag: "jobs", Params: []Param{jobIDParam},
			Description: "Returns a job of the key's account; a job of another account is 404.",
			Answers: []Answer{{Status: 200, Description: "The job.", Schema: "JobResponse", Headers: rateLimitHeaders(),
				Example: map[string]any{"code": 0, "message": "", "data": exJob("succeeded", true, exTime, exTime)}}},
			Errors: []int{400, 404},
		}, Handler: s.queryJob},
		{Method: http.MethodGet, Path: apiPrefix + "/queue-request", Summary: "Recover a single send by its Idempotency-Key", Auth: true, Doc: Doc{
			ID: "recoverByKey", Tag: "jobs",
			Params: []Param{{Name: "key", In: "query", Required: true, Example: "deploy-42",
				Description: "The Idempotency-Key used in the single send.", Schema: str("An Idempotency-Key.").with("minLength", 1, "maxLength", push.MaxIdempotencyKey, "pattern", "^[A-Za-z0-9_:-]+$")}},
			Description: "Recovers a single send after a lost connection, by its Idempotency-Key. When no record is found, data is null and the original request may be resubmitted with the original key. " +
				"Batch sends are not recovered this way (400 batch_key): use the jobId of each item.",
			Answers: []Answer{{Status: 200, Description: "The send's job and message record, or data null when the key was never used (or is past the retention).",
				Schema: "QueueRequestResponse", Headers: rateLimitHeaders(),
				Example: map[string]any{"code": 0, "message": "", "data": func() map[string]any {
					m := exJob("succeeded", true, exTime, exTime)
					m["idempotencyKey"] = "deploy-42"
					m["record"] = exRecord("SUCCESS", false, false, "123456789:17", "")
					return m
				}()}}},
			Errors: []int{400},
		}, Handler: s.queryByKey},
		{Method: http.MethodPost, Path: apiPrefix + "/queue/:id/cancel", Summary: "Cancel a queued job (extension)", Auth: true, Doc: Doc{
			ID: "cancelJob", Tag: "jobs", Params: []Param{jobIDParam},
			Description: "Cancels a job that is still queued and returns its points. A job that already started (or settled) cannot be canceled: 409 job_not_queued.",
			Answers: []Answer{{Status: 200, Description: "The job, now canceled.", Schema: "JobResponse", Headers: rateLimitHeaders(),
				Example: map[string]any{"code": 0, "message": "the job was canceled and its points were returned", "data": func() map[string]any {
					m := exJob("canceled", false, nil, exTime)
					m["error"] = "canceled by the caller"
					return m
				}()}}},
			Errors: []int{400, 404, 409},
		}, Handler: s.cancelJob},
	}
	jobFields := jobFields(p)
	keyed := append(append([]field{}, jobFields...),
		req("idempotencyKey", str("The Idempotency-Key of the send.")),
		req("record", ref("MessageRecord")),
	)
	return section{tags: []openAPITag{{"jobs", "Track, recover and cancel sends."}}, routes: routes, schemas: map[string]Schema{
		"Job":         object("A job: one message to one target.", true, jobFields...),
		"KeyedJob":    object("The job of a single send found by its Idempotency-Key, with its message record.", true, keyed...),
		"JobResponse": p.envelope("A job.", ref("Job")),
		"QueueRequestResponse": p.envelope("The single send made with the key, or null when there is none (never used, or older than the retention): the original request may then be resubmitted with the original key.",
			Schema{"oneOf": []any{ref("KeyedJob"), Schema{"type": "null"}}}),
	}}
}

// jobFields are the fields of a job as the job query answers it.
func jobFields(p schemaParts) []field {
	return []field{
		req("jobId", p.jobID),
		req("status", str("The job state (section 3 of the contract).").with("enum", jobStates())),
		req("success", boolean("true when delivered, false when failed, canceled or expired, null while pending or uncertain.").orNull()),
		req("pending", boolean("True while queued or running.")),
		req("uncertain", boolean("True when delivery needs verification.")),
		req("messageId", integer("The message record id.")),
		req("botId", integer("Bot id.")),
		req("targetId", integer("Target id; null for platforms without targets.").orNull()),
		req("msgType", p.msgType),
		req("platformIndex", str("The platform's id of the delivered message (empty until delivered).")),
		opt("error", p.errText),
		req("attempts", integer("Platform calls made for the job.").with("minimum", 0)),
		req("createdAt", str("When the job was created (RFC 3339, UTC).").with("format", "date-time")),
		req("updatedAt", str("When the job last changed.").with("format", "date-time")),
		req("startedAt", str("When sending started; null while queued.").with("format", "date-time").orNull()),
		req("finishedAt", str("When the job settled; null while pending.").with("format", "date-time").orNull()),
		opt("resolvedAt", str("Extension: when an uncertain job was resolved as succeeded or failed (absent: it was not).").with("format", "date-time")),
		opt("resolvedBy", str("Extension: who resolved it, as the audit trail names them.")),
		opt("note", str("Extension: the note given when it was resolved.")),
	}
}
