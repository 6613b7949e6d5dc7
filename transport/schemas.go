package transport

import (
	"fmt"
	"strings"

	"github.com/heraldpush/herald/push"
)

// Schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) as
// it appears in the OpenAPI document.
type Schema map[string]any

func ref(name string) Schema { return Schema{"$ref": "#/components/schemas/" + name} }

func str(desc string) Schema { return Schema{"type": "string", "description": desc} }

func integer(desc string) Schema { return Schema{"type": "integer", "description": desc} }

func boolean(desc string) Schema { return Schema{"type": "boolean", "description": desc} }

func array(items Schema, desc string) Schema {
	return Schema{"type": "array", "items": items, "description": desc}
}

// with returns a copy of s with more keywords.
func (s Schema) with(kv ...any) Schema {
	out := make(Schema, len(s)+len(kv)/2)
	for k, v := range s {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// orNull makes s also accept null.
func (s Schema) orNull() Schema {
	out := s.with()
	out["type"] = []string{s["type"].(string), "null"}
	return out
}

// field is one property of an object schema, in the order the docs page
// lists them.
type field struct {
	name     string
	schema   Schema
	required bool
}

// object is an object schema. A closed object (an answer) refuses
// properties it does not list, so that the tests that check every answer
// against the document catch a field the document forgot.
func object(desc string, closed bool, fields ...field) Schema {
	props := make(map[string]any, len(fields))
	var required []string
	order := make([]string, len(fields))
	for i, f := range fields {
		props[f.name] = f.schema
		order[i] = f.name
		if f.required {
			required = append(required, f.name)
		}
	}
	s := Schema{"type": "object", "properties": props, "x-order": order}
	if desc != "" {
		s["description"] = desc
	}
	if len(required) > 0 {
		s["required"] = required
	}
	if closed {
		s["additionalProperties"] = false
	}
	return s
}

func req(name string, s Schema) field { return field{name, s, true} }
func opt(name string, s Schema) field { return field{name, s, false} }

// jobStates lists the job states of section 3 of the contract.
func jobStates() []string {
	var out []string
	for _, s := range push.States() {
		out = append(out, string(s))
	}
	return out
}

// recordStatuses lists a message record's statuses: SUCCESS, or the job
// state in capitals.
func recordStatuses() []string {
	out := []string{"SUCCESS"}
	for _, s := range jobStates() {
		if s != string(push.StateSucceeded) {
			out = append(out, strings.ToUpper(s))
		}
	}
	return out
}

// schemas are the document's component schemas, for the limits in force.
func schemas(l push.Limits) map[string]Schema {
	content := str(fmt.Sprintf("The message. At most %d characters (Unicode code points) for text and Markdown; for an image, an optional caption (some platforms cap captions lower).", l.MaxContent))
	msgType := integer("0 = plain text (default), 2 = Markdown (sent as HTML on Telegram), 7 = image.").with("enum", []int{0, 2, 7})
	imageURL := str("An absolute http or https URL of the image (at most 2048 bytes). When set, the message is an image whatever msgType says.").with("format", "uri", "maxLength", 2048)
	jobID := str("The job's id: track the job with GET /api/openapi/queue/{id}.").with("format", "uuid")
	jobIDs := []any{"0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10"}
	code0 := integer("0: the request was accepted. Then read the status of each message.").with("const", 0)
	msg := str("Empty on success; otherwise a human-readable note (a batch's counts, why a send is pending).")
	errText := str("Why the message was not delivered, or why its delivery is uncertain (the platform's reason).")

	record := object("A message record: one message to one target, and the job that sends it.", true,
		req("id", integer("Message record id.")),
		req("bot", integer("Bot id.")),
		req("user", integer("Account (user) id.")),
		req("content", str("Message content.")),
		req("msg_type", msgType),
		req("status", str("SUCCESS when delivered; otherwise the job state in capitals. Only SUCCESS means delivered.").with("enum", recordStatuses())),
		req("platformIndex", str("The platform's id of the delivered message (empty until delivered).")),
		req("jobId", jobID.with("examples", jobIDs)),
		req("pending", boolean("True while the job is queued or running: not delivered yet; do not resend, query the job.")),
		req("uncertain", boolean("True when the platform may have received the message: delivery waits for verification; do not resend.")),
		opt("error", errText),
	)
	jobFields := []field{
		req("jobId", jobID),
		req("status", str("The job state (section 3 of the contract).").with("enum", jobStates())),
		req("success", boolean("true when delivered, false when failed, canceled or expired, null while pending or uncertain.").orNull()),
		req("pending", boolean("True while queued or running.")),
		req("uncertain", boolean("True when delivery needs verification.")),
		req("messageId", integer("The message record id.")),
		req("botId", integer("Bot id.")),
		req("targetId", integer("Target id; null for platforms without targets.").orNull()),
		req("msgType", msgType),
		req("platformIndex", str("The platform's id of the delivered message (empty until delivered).")),
		opt("error", errText),
		req("attempts", integer("Platform calls made for the job.").with("minimum", 0)),
		req("createdAt", str("When the job was created (RFC 3339, UTC).").with("format", "date-time")),
		req("updatedAt", str("When the job last changed.").with("format", "date-time")),
		req("startedAt", str("When sending started; null while queued.").with("format", "date-time").orNull()),
		req("finishedAt", str("When the job settled; null while pending.").with("format", "date-time").orNull()),
	}
	keyed := append(append([]field{}, jobFields...),
		req("idempotencyKey", str("The Idempotency-Key of the send.")),
		req("record", ref("MessageRecord")),
	)
	envelope := func(desc string, data Schema) Schema {
		return object(desc, true, req("code", code0), req("message", msg), req("data", data))
	}
	count := func(desc string) Schema { return integer(desc).with("minimum", 0) }
	batchItem := object("The result for one target.", true,
		req("target_id", integer("Target id.")),
		req("success", boolean("True only when delivered.")),
		req("message_id", integer("Message record id.")),
		req("jobId", jobID),
		req("status", str("succeeded, failed, uncertain, canceled or expired; queued for every unfinished item (track it by jobId).").with("enum", []string{"succeeded", "failed", "queued", "uncertain", "canceled", "expired"})),
		req("pending", boolean("True while unfinished.")),
		req("uncertain", boolean("True when delivery needs verification.")),
		opt("error", errText),
	)
	multiItem := object("The result for one target of one bot.", true,
		req("botId", integer("Bot id.")),
		req("target", str("Target id.")),
		req("status", str("success for delivered; pending while unfinished; otherwise failed, uncertain, canceled or expired.").with("enum", []string{"success", "pending", "failed", "uncertain", "canceled", "expired"})),
		req("message_id", integer("Message record id.")),
		req("jobId", jobID),
		opt("error", errText),
	)
	return map[string]Schema{
		"PrivateSendRequest": object("", false,
			req("botId", integer("The bot's id; it must belong to the account of the API key.").with("minimum", 1)),
			opt("target", str("The id of a target bound to the bot, as a string of digits. Required except for platforms without targets (push relays, workplace webhooks).").with("pattern", "^[0-9]+$")),
			opt("content", content),
			opt("msgType", msgType),
			opt("imageUrl", imageURL),
			opt("targetType", str("user or group; it must be the bound target's type (the default).").with("enum", []string{"user", "group"})),
			opt("isWakeup", boolean("Send in wake-up mode where the platform has one (default false).")),
		),
		"CompatSendRequest": object("", false,
			req("bot_id", integer("The bot's id.").with("minimum", 1)),
			opt("target_id", integer("The id of a target bound to the bot. Required except for platforms without targets.").with("minimum", 1)),
			opt("content", content),
			opt("msg_type", msgType),
			opt("image_url", imageURL),
		),
		"BatchSendRequest": object("", false,
			req("bot_id", integer("The bot's id.").with("minimum", 1)),
			req("target_ids", array(integer("A target id.").with("minimum", 1), fmt.Sprintf("Targets bound to the bot: 1 to %d, each once.", l.MaxTargets)).with("minItems", 1, "maxItems", l.MaxTargets)),
			opt("content", content),
			opt("msg_type", msgType),
			opt("image_url", imageURL),
		),
		"MultiSendRequest": object("", false,
			req("bots", array(object("One bot and its targets.", false,
				opt("botId", integer("The bot's id (bot_id is also accepted).").with("minimum", 1)),
				opt("bot_id", integer("Older name of botId.").with("minimum", 1)),
				req("targets", array(str("A target id, as a string of digits.").with("pattern", "^[0-9]+$"), "Targets bound to that bot; not empty.").with("minItems", 1)),
			), fmt.Sprintf("At least one group; at most %d targets in all groups together.", l.MaxTargets)).with("minItems", 1)),
			opt("content", content),
			opt("msgType", msgType),
			opt("imageUrl", imageURL),
		),
		"MessageRecord": record,
		"Job":           object("A job: one message to one target.", true, jobFields...),
		"KeyedJob":      object("The job of a single send found by its Idempotency-Key, with its message record.", true, keyed...),
		"SendResponse":  envelope("The answer of a single send.", ref("MessageRecord")),
		"BatchSendResponse": envelope("The answer of a batch send to one bot's targets.", object("", true,
			req("total", count("Targets of the request.")),
			req("success", count("Delivered items.")),
			req("failed", count("Items that ended failed, canceled or expired.")),
			req("results", array(ref("BatchItem"), "One element per target, in the request's order: inspect every element.")),
		)),
		"BatchItem": batchItem,
		"MultiSendResponse": envelope("The answer of a batch send across bots.", object("", true,
			req("total", count("Targets of the request.")),
			req("success_count", count("Delivered items.")),
			req("fail_count", count("Items that ended failed, canceled or expired.")),
			req("pending_count", count("Items still queued or sending: not delivered.")),
			req("uncertain_count", count("Items whose delivery needs verification.")),
			req("results", array(ref("MultiItem"), "One element per target, bot by bot in the request's order: inspect every element.")),
		)),
		"MultiItem":   multiItem,
		"JobResponse": envelope("A job.", ref("Job")),
		"QueueRequestResponse": envelope("The single send made with the key, or null when there is none (never used, or older than the retention): the original request may then be resubmitted with the original key.",
			Schema{"oneOf": []any{ref("KeyedJob"), Schema{"type": "null"}}}),
		"Error": object("The body of every refusal and failure.", true,
			req("code", integer("The HTTP status.").with("minimum", 400, "maximum", 599)),
			req("message", str("What is wrong and what to do.")),
			req("error", str("A stable snake_case reason, e.g. insufficient_points, idempotency_conflict, backlog_full, rate_limited, platform_failed.").with("pattern", "^[a-z0-9_]+$")),
			opt("data", ref("MessageRecord").with("description", "For a single send the platform refused (platform_failed): the message record.")),
		),
		"Health": object("The process is up.", true,
			req("status", str("ok").with("const", "ok")),
		),
		"Readiness": object("Whether this process can take traffic, and the state of each dependency.", true,
			req("status", str("ready; draining while the process stops; unavailable when a dependency is down.").with("enum", []string{"ready", "draining", "unavailable"})),
			req("checks", Schema{"type": "object", "description": "Each dependency (database, and Redis where configured): ok, or failing.",
				"additionalProperties": Schema{"type": "string", "enum": []string{"ok", "failing"}}}),
		),
	}
}
