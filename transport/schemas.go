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

// orNullRef makes a schema that is a $ref also accept null.
func (s Schema) orNullRef() Schema {
	return Schema{"oneOf": []any{s, Schema{"type": "null"}}}
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

// alias is a property that is the other endpoints' name of the property
// own: taken in its place; both with different values are refused. Code
// generators would give both spellings one name (bot_id and botId are both
// BotId in Go): x-go-name names the alias apart, and an enumeration's alias
// takes its plain type (x-go-type) rather than a second enum type of the
// same name.
func alias(name, own string, s Schema) field {
	out := s.with("description", "The other spelling of "+own+", taken in its place; giving both with different values is refused (400 conflicting_fields).",
		"x-go-name", goName(name)+"Alias")
	if _, ok := s["enum"]; ok {
		out["x-go-type"] = map[string]string{"integer": "int", "string": "string"}[s["type"].(string)]
	}
	return opt(name, out)
}

// goName is a property's name as Go code generators spell it: bot_id and
// botId are BotId.
func goName(name string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// strict closes a request's object schema, as the server reads it: a
// property it does not list (or lists in another case), or one given
// twice, is refused with 400. required lists the properties that must be
// given under one of their two names (own name first).
func strict(s Schema, required ...[2]string) Schema {
	out := s.with("additionalProperties", false)
	var all []any
	for _, r := range required {
		all = append(all, Schema{"anyOf": []any{Schema{"required": []string{r[0]}}, Schema{"required": []string{r[1]}}}})
	}
	switch len(all) {
	case 0:
	case 1:
		out["anyOf"] = all[0].(Schema)["anyOf"]
	default:
		out["allOf"] = all
	}
	return out
}

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

// schemaParts are the schemas that several sections' component schemas
// share, for the limits in force.
type schemaParts struct {
	content, msgType, imageURL, jobID, code0, msg, errText Schema
}

func newSchemaParts(l push.Limits) schemaParts {
	return schemaParts{
		content:  str(fmt.Sprintf("The message. At most %d characters (Unicode code points) for text and Markdown; for an image, an optional caption (some platforms cap captions lower). An image message (msgType 7) without an image URL whose content is one http or https URL sends that URL as the image, without a caption. Valid UTF-8 without NUL characters or lone surrogate escapes.", l.MaxContent)).with("maxLength", l.MaxContent),
		msgType:  integer("0 = plain text (default), 2 = Markdown (sent as HTML on Telegram), 7 = image.").with("enum", []int{0, 2, 7}),
		imageURL: str("An absolute http or https URL of the image (at most 2048 bytes). When set, the message is an image whatever msgType says.").with("format", "uri", "maxLength", 2048),
		jobID:    str("The job's id: track the job with GET /api/openapi/queue/{id}.").with("format", "uuid"),
		code0:    integer("0: the request was accepted. Then read the status of each message.").with("const", 0),
		msg:      str("Empty on success; otherwise a human-readable note (a batch's counts, why a send is pending)."),
		errText:  str("Why the message was not delivered, or why its delivery is uncertain (the platform's reason); while a running job waits to retry a platform call that sent nothing, what failed and when it is tried again."),
	}
}

// envelope is the schema of an answer: code 0, a message and data.
func (p schemaParts) envelope(desc string, data Schema) Schema {
	return object(desc, true, req("code", p.code0), req("message", p.msg), req("data", data))
}

// countOf is the schema of a count of items.
func countOf(desc string) Schema { return integer(desc).with("minimum", 0) }

// errorSchemas are the component schemas of every refusal.
func errorSchemas() map[string]Schema {
	return map[string]Schema{
		"Error": object("The body of every refusal and failure.", true,
			req("code", integer("The HTTP status.").with("minimum", 400, "maximum", 599)),
			req("message", str("What is wrong and what to do.")),
			req("error", str("A stable snake_case reason, e.g. insufficient_points, idempotency_conflict, backlog_full, rate_limited, platform_failed.").with("pattern", "^[a-z0-9_]+$")),
			opt("data", ref("MessageRecord").with("description", "For a single send the platform refused (platform_failed): the message record.")),
		),
	}
}
