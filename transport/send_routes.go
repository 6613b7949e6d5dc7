package transport

import (
	"fmt"
	"net/http"
)

// exRecord is an example message record.
func exRecord(status string, pending, uncertain bool, index, errText string) map[string]any {
	m := map[string]any{"id": 42, "bot": 1, "user": 1, "content": "**deployed** v42", "msg_type": 2, "status": status,
		"platformIndex": index, "jobId": exJobID, "pending": pending, "uncertain": uncertain}
	if errText != "" {
		m["error"] = errText
	}
	return m
}

// sendErrors are the refusals a send itself can answer.
func sendErrors() []int { return []int{400, 404, 409, 413} }

// sendSection is the single sends: the recommended endpoint and the
// compatibility one.
func (s *Server) sendSection(p schemaParts) section {
	sync := duration(s.eng.Limits().SyncWait)
	single := []Answer{
		{Status: 200, Description: "Delivered (status SUCCESS). A replay of a send that was canceled or expired also answers 200, with that status.",
			Schema: "SendResponse", Headers: sendHeaders(),
			Example: map[string]any{"code": 0, "message": "", "data": exRecord("SUCCESS", false, false, "123456789:17", "")}},
		{Status: 202, Description: fmt.Sprintf("Not finished within the synchronous wait (%s): pending=true and a jobId; or uncertain=true when the platform may have received it. Neither is delivered: query the job, do not resend.", sync),
			Schema: "SendResponse", Headers: sendHeaders(),
			Example: map[string]any{"code": 0, "message": "the message is still being sent: track it with GET /api/openapi/queue/" + exJobID + " and do not resend it",
				"data": exRecord("QUEUED", true, false, "", "")}},
	}
	routes := []Route{
		{Method: http.MethodPost, Path: apiPrefix + "/v1/push/private", Summary: "Send one message (recommended)", Auth: true, Doc: Doc{
			ID: "sendPrivate", Tag: "send", Idempotent: true, Body: "PrivateSendRequest",
			Description: fmt.Sprintf("Sends one message to one bound target. Send an Idempotency-Key for every logical push. "+
				"If the send is not finished within %s, the answer is 202 with pending=true and a jobId: track it with the job query and do not resend under a new key.", sync),
			BodyExample: map[string]any{"botId": 1, "target": "7", "content": "**deployed** v42", "msgType": 2},
			Answers:     single, Errors: sendErrors(),
		}, Handler: s.sendPrivate},
		{Method: http.MethodPost, Path: apiPrefix + "/send", Summary: "Send one message (compatibility)", Auth: true, Doc: Doc{
			ID: "sendCompat", Tag: "send", Idempotent: true, Body: "CompatSendRequest",
			Description: "The single send with the older parameter names (bot_id, target_id, msg_type, image_url). " +
				"It is the same kind of request as the recommended endpoint: a key used on one replays on the other. New projects use POST /api/openapi/v1/push/private.",
			BodyExample: map[string]any{"bot_id": 1, "target_id": 7, "content": "**deployed** v42", "msg_type": 2},
			Answers:     single, Errors: sendErrors(),
		}, Handler: s.sendCompat},
	}
	return section{tags: []openAPITag{{"send", "Send messages: one target, one bot's targets, or several bots."}}, routes: routes, schemas: map[string]Schema{
		"PrivateSendRequest": strict(object("Fields are case-sensitive; each is also taken under the compatibility endpoint's name. Any other field, a field in another case, a field given twice, and a string that is not valid UTF-8 or holds a lone surrogate or a NUL are refused with 400.", false,
			opt("botId", integer("The bot's id; it must belong to the account of the API key. Required (as botId or bot_id).").with("minimum", 1)),
			opt("target", str("The id of a target bound to the bot, as a string of digits. Required except for platforms without targets (push relays, workplace webhooks).").with("pattern", "^[0-9]+$")),
			opt("content", p.content),
			opt("msgType", p.msgType),
			opt("imageUrl", p.imageURL),
			opt("targetType", str("user or group; it must be the bound target's type (the default).").with("enum", []string{"user", "group"})),
			opt("isWakeup", boolean("Send in wake-up mode where the platform has one (default false).")),
			alias("bot_id", "botId", integer("").with("minimum", 1)),
			alias("target_id", "target", integer("").with("minimum", 0)),
			alias("msg_type", "msgType", p.msgType),
			alias("image_url", "imageUrl", p.imageURL),
			alias("target_type", "targetType", str("").with("enum", []string{"user", "group"})),
			alias("is_wakeup", "isWakeup", boolean("")),
		), [2]string{"botId", "bot_id"}),
		"CompatSendRequest": strict(object("Fields are case-sensitive; each is also taken under the recommended endpoint's name. Any other field, a field in another case, a field given twice, and a string that is not valid UTF-8 or holds a lone surrogate or a NUL are refused with 400.", false,
			opt("bot_id", integer("The bot's id. Required (as bot_id or botId).").with("minimum", 1)),
			opt("target_id", integer("The id of a target bound to the bot. Required except for platforms without targets.").with("minimum", 1)),
			opt("content", p.content),
			opt("msg_type", p.msgType),
			opt("image_url", p.imageURL),
			opt("target_type", str("user or group; it must be the bound target's type (the default).").with("enum", []string{"user", "group"})),
			opt("is_wakeup", boolean("Send in wake-up mode where the platform has one (default false).")),
			alias("botId", "bot_id", integer("").with("minimum", 1)),
			alias("target", "target_id", str("").with("pattern", "^[0-9]*$")),
			alias("msgType", "msg_type", p.msgType),
			alias("imageUrl", "image_url", p.imageURL),
			alias("targetType", "target_type", str("").with("enum", []string{"user", "group"})),
			alias("isWakeup", "is_wakeup", boolean("")),
		), [2]string{"bot_id", "botId"}),
		"MessageRecord": object("A message record: one message to one target, and the job that sends it.", true,
			req("id", integer("Message record id.")),
			req("bot", integer("Bot id.")),
			req("user", integer("Account (user) id.")),
			req("content", str("Message content.")),
			req("msg_type", p.msgType),
			req("status", str("SUCCESS when delivered; otherwise the job state in capitals. Only SUCCESS means delivered.").with("enum", recordStatuses())),
			req("platformIndex", str("The platform's id of the delivered message (empty until delivered).")),
			req("jobId", p.jobID.with("examples", []any{exJobID})),
			req("pending", boolean("True while the job is queued or running: not delivered yet; do not resend, query the job.")),
			req("uncertain", boolean("True when the platform may have received the message: delivery waits for verification; do not resend.")),
			opt("error", p.errText),
		),
		"SendResponse": p.envelope("The answer of a single send.", ref("MessageRecord")),
	}}
}
