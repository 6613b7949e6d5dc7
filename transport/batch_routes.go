package transport

import (
	"fmt"
	"net/http"
)

// batchAnswers are the answers of the two batch sends.
func batchAnswers(schema, sync string, done, pending any) []Answer {
	return []Answer{
		{Status: 200, Description: "Every item is settled; read every element of results (an item may have failed or be uncertain).", Schema: schema, Headers: sendHeaders(), Example: done},
		{Status: 202, Description: fmt.Sprintf("Some items are not finished after the synchronous wait (%s in all): they carry a jobId; track each.", sync), Schema: schema, Headers: sendHeaders(), Example: pending},
	}
}

// exBatchItem and exMultiItem are example results of the batch sends.
func exBatchItem(target int, status string, success, pending bool) map[string]any {
	return map[string]any{"target_id": target, "success": success, "message_id": 40 + target, "jobId": exJobID,
		"status": status, "pending": pending, "uncertain": false}
}

func exMultiItem(bot int, target, status string) map[string]any {
	return map[string]any{"botId": bot, "target": target, "status": status, "message_id": 50, "jobId": exJobID}
}

// batchSection is the batch sends: several targets of one bot, and
// targets of several bots.
func (s *Server) batchSection(p schemaParts) section {
	l := s.eng.Limits()
	sync := duration(l.SyncWait)
	routes := []Route{
		{Method: http.MethodPost, Path: apiPrefix + "/batch-send", Summary: "Batch send to several targets of one bot", Auth: true, Doc: Doc{
			ID: "sendBatch", Tag: "send", Idempotent: true, Body: "BatchSendRequest",
			Description: fmt.Sprintf("Sends one message to up to %d targets of one bot. The answer waits at most %s in total; unfinished items carry a jobId and the status queued. "+
				"Platforms without targets are sent to with a single send. A replayed key needs the identical message and target list.", l.MaxTargets, sync),
			BodyExample: map[string]any{"bot_id": 1, "target_ids": []int{7, 8}, "content": "hello all"},
			Answers: batchAnswers("BatchSendResponse", sync,
				map[string]any{"code": 0, "message": "2 succeeded, 0 failed, 0 pending, 0 uncertain", "data": map[string]any{
					"total": 2, "success": 2, "failed": 0, "results": []any{exBatchItem(7, "succeeded", true, false), exBatchItem(8, "succeeded", true, false)}}},
				map[string]any{"code": 0, "message": "1 succeeded, 0 failed, 1 pending, 0 uncertain", "data": map[string]any{
					"total": 2, "success": 1, "failed": 0, "results": []any{exBatchItem(7, "succeeded", true, false), exBatchItem(8, "queued", false, true)}}}),
			Errors: sendErrors(),
		}, Handler: s.batchSend},
		{Method: http.MethodPost, Path: apiPrefix + "/v1/push/batch", Summary: "Batch send across several bots", Auth: true, Doc: Doc{
			ID: "sendAcrossBots", Tag: "send", Idempotent: true, Body: "MultiSendRequest",
			Description: fmt.Sprintf("Sends one message to targets of several bots: each group names a bot and a non-empty targets list, at most %d targets in all. "+
				"The answer counts pending and uncertain items apart and gives each unfinished item its jobId. A queued item is not a delivered item.", l.MaxTargets),
			BodyExample: map[string]any{"bots": []any{map[string]any{"botId": 1, "targets": []string{"7", "8"}}, map[string]any{"botId": 2, "targets": []string{"9"}}}, "content": "hello", "msgType": 0},
			Answers: batchAnswers("MultiSendResponse", sync,
				map[string]any{"code": 0, "message": "3 succeeded, 0 failed, 0 pending, 0 uncertain", "data": map[string]any{
					"total": 3, "success_count": 3, "fail_count": 0, "pending_count": 0, "uncertain_count": 0,
					"results": []any{exMultiItem(1, "7", "success"), exMultiItem(1, "8", "success"), exMultiItem(2, "9", "success")}}},
				map[string]any{"code": 0, "message": "2 succeeded, 0 failed, 1 pending, 0 uncertain", "data": map[string]any{
					"total": 3, "success_count": 2, "fail_count": 0, "pending_count": 1, "uncertain_count": 0,
					"results": []any{exMultiItem(1, "7", "success"), exMultiItem(1, "8", "success"), exMultiItem(2, "9", "pending")}}}),
			Errors: sendErrors(),
		}, Handler: s.multiSend},
	}
	return section{routes: routes, schemas: map[string]Schema{
		"BatchSendRequest": strict(object("Fields are case-sensitive; each is also taken under its camelCase name. Any other field, a field in another case, a field given twice, and a string that is not valid UTF-8 or holds a lone surrogate or a NUL are refused with 400.", false,
			opt("bot_id", integer("The bot's id. Required (as bot_id or botId).").with("minimum", 1)),
			opt("target_ids", array(integer("A target id.").with("minimum", 1), fmt.Sprintf("Targets bound to the bot: 1 to %d, each once. Required (as target_ids or targetIds).", l.MaxTargets)).with("minItems", 1, "maxItems", l.MaxTargets)),
			opt("content", p.content),
			opt("msg_type", p.msgType),
			opt("image_url", p.imageURL),
			alias("botId", "bot_id", integer("").with("minimum", 1)),
			alias("targetIds", "target_ids", array(integer("A target id.").with("minimum", 1), "").with("minItems", 1, "maxItems", l.MaxTargets)),
			alias("msgType", "msg_type", p.msgType),
			alias("imageUrl", "image_url", p.imageURL),
		), [2]string{"bot_id", "botId"}, [2]string{"target_ids", "targetIds"}),
		"MultiSendRequest": strict(object("Fields are case-sensitive; each is also taken under its snake_case name. Any other field, a field in another case, a field given twice (also in a group), and a string that is not valid UTF-8 or holds a lone surrogate or a NUL are refused with 400.", false,
			req("bots", array(strict(object("One bot and its targets.", false,
				opt("botId", integer("The bot's id. Required (as botId or bot_id).").with("minimum", 1)),
				alias("bot_id", "botId", integer("").with("minimum", 1)),
				req("targets", array(str("A target id, as a string of digits.").with("pattern", "^[0-9]+$"), "Targets bound to that bot; not empty.").with("minItems", 1)),
			), [2]string{"botId", "bot_id"}), fmt.Sprintf("At least one group; at most %d targets in all groups together.", l.MaxTargets)).with("minItems", 1)),
			opt("content", p.content),
			opt("msgType", p.msgType),
			opt("imageUrl", p.imageURL),
			alias("msg_type", "msgType", p.msgType),
			alias("image_url", "imageUrl", p.imageURL),
		)),
		"BatchSendResponse": p.envelope("The answer of a batch send to one bot's targets.", object("", true,
			req("total", countOf("Targets of the request.")),
			req("success", countOf("Delivered items.")),
			req("failed", countOf("Items that ended failed, canceled or expired.")),
			req("results", array(ref("BatchItem"), "One element per target, in the request's order: inspect every element.")),
		)),
		"BatchItem": object("The result for one target.", true,
			req("target_id", integer("Target id.")),
			req("success", boolean("True only when delivered.")),
			req("message_id", integer("Message record id.")),
			req("jobId", p.jobID),
			req("status", str("succeeded, failed, uncertain, canceled or expired; queued for every unfinished item (track it by jobId).").with("enum", []string{"succeeded", "failed", "queued", "uncertain", "canceled", "expired"})),
			req("pending", boolean("True while unfinished.")),
			req("uncertain", boolean("True when delivery needs verification.")),
			opt("error", p.errText),
		),
		"MultiSendResponse": p.envelope("The answer of a batch send across bots.", object("", true,
			req("total", countOf("Targets of the request.")),
			req("success_count", countOf("Delivered items.")),
			req("fail_count", countOf("Items that ended failed, canceled or expired.")),
			req("pending_count", countOf("Items still queued or sending: not delivered.")),
			req("uncertain_count", countOf("Items whose delivery needs verification.")),
			req("results", array(ref("MultiItem"), "One element per target, bot by bot in the request's order: inspect every element.")),
		)),
		"MultiItem": object("The result for one target of one bot.", true,
			req("botId", integer("Bot id.")),
			req("target", str("Target id.")),
			req("status", str("success for delivered; pending while unfinished; otherwise failed, uncertain, canceled or expired.").with("enum", []string{"success", "pending", "failed", "uncertain", "canceled", "expired"})),
			req("message_id", integer("Message record id.")),
			req("jobId", p.jobID),
			opt("error", p.errText),
		),
	}}
}
