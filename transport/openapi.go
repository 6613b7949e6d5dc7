package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// OpenAPIVersion is the version of the OpenAPI specification the document
// follows.
const OpenAPIVersion = "3.1.0"

// The OpenAPI document, as far as Herald uses it. Schemas are JSON Schema
// 2020-12 maps.
type openAPIDoc struct {
	OpenAPI           string                           `json:"openapi"`
	Info              openAPIInfo                      `json:"info"`
	JSONSchemaDialect string                           `json:"jsonSchemaDialect"`
	Servers           []openAPIServer                  `json:"servers"`
	Tags              []openAPITag                     `json:"tags"`
	Paths             map[string]map[string]*operation `json:"paths"`
	Components        components                       `json:"components"`
}

type openAPIInfo struct {
	Title       string         `json:"title"`
	Version     string         `json:"version"`
	Description string         `json:"description"`
	License     openAPILicense `json:"license"`
	Contact     openAPIContact `json:"contact"`
}

type openAPILicense struct {
	Name       string `json:"name"`
	Identifier string `json:"identifier"`
}

type openAPIContact struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type openAPIServer struct {
	URL         string `json:"url"`
	Description string `json:"description"`
}

type openAPITag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type operation struct {
	OperationID string                `json:"operationId"`
	Summary     string                `json:"summary"`
	Description string                `json:"description"`
	Tags        []string              `json:"tags"`
	Security    []map[string][]string `json:"security"`
	Parameters  []any                 `json:"parameters,omitempty"`
	RequestBody *requestBody          `json:"requestBody,omitempty"`
	Responses   map[string]any        `json:"responses"`
}

type parameter struct {
	Name        string `json:"name"`
	In          string `json:"in"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Schema      Schema `json:"schema"`
	Example     any    `json:"example,omitempty"`
}

type requestBody struct {
	Required bool                 `json:"required"`
	Content  map[string]mediaType `json:"content"`
}

type mediaType struct {
	Schema  Schema `json:"schema,omitempty"`
	Example any    `json:"example,omitempty"`
}

type response struct {
	Description string               `json:"description"`
	Headers     map[string]any       `json:"headers,omitempty"`
	Content     map[string]mediaType `json:"content,omitempty"`
}

type header struct {
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	Schema      Schema `json:"schema"`
}

type securityScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme,omitempty"`
	In          string `json:"in,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
}

type components struct {
	Schemas         map[string]Schema         `json:"schemas"`
	Responses       map[string]response       `json:"responses"`
	Parameters      map[string]parameter      `json:"parameters"`
	Headers         map[string]header         `json:"headers"`
	SecuritySchemes map[string]securityScheme `json:"securitySchemes"`
}

// errorDoc documents one error status (section 7 of the contract).
type errorDoc struct {
	Status    int
	Name      string // the component response's name
	Condition string
	Handling  string
	Reason    string // an example reason
	Message   string // an example message
}

// errorDocs lists every error status the API answers.
func errorDocs(l push.Limits, maxBody int64) []errorDoc {
	rate, rateMsg := "Too many requests", "the queue of bot 1 is full: 100 messages are waiting (limit 100); retry after some are sent"
	if l.RatePerMinute > 0 {
		rate = fmt.Sprintf("Too many requests (%d per minute per API key)", l.RatePerMinute)
		rateMsg = fmt.Sprintf("too many requests: this API key may make %d requests per minute; retry after 1s", l.RatePerMinute)
	}
	rateReason := "rate_limited"
	if l.RatePerMinute <= 0 {
		rateReason = "backlog_full"
	}
	return []errorDoc{
		{400, "BadRequest", "Bad parameters, or insufficient points when the points system is on. Send bodies are read strictly: a field the endpoint does not take under either spelling (unknown_field), a field in another case (field_name_case), a field given twice (duplicate_field), both spellings of a field with different values (conflicting_fields), and text that is not valid UTF-8 or holds a lone surrogate escape or a NUL (invalid_text) are refused, never ignored or altered. A malformed request line or header is 400 too.",
			"Check the body, bot id, target id, content and points balance; error names the rule and message the field.", "insufficient_points",
			"the request costs 2 points; the balance is 1: top up the account or send to fewer targets"},
		{401, "Unauthorized", "The API key is missing or invalid (or, on the management API, you are not signed in).", "Check the authentication header, or sign in.", "missing_api_key",
			`no API key was sent: send the header "Authorization: Bearer <API key>" (or "X-Service-OpenAPI-Key: <API key>")`},
		{403, "Forbidden", "The key was revoked or expired, the account is suspended, the caller may not do this (operators only), or a signed-in request came from another site.", "Check the key and the account's state; create a new key.", "key_revoked",
			"this API key was revoked: create a new key"},
		{404, "NotFound", "The bot, target, job or other object does not exist in the caller's account (another account's is 404); or no endpoint has the path (a trailing slash, a '.', '..' or empty segment is not redirected: the message names the path as sent and the path meant).",
			"The bot must belong to the key's account; the target must be bound to the bot.", "bot_not_found",
			"bot 9 does not exist in your account: check the bot id"},
		{409, "Conflict", "The Idempotency-Key was used for another message (compared by meaning: the bound target's type, default values and the other spelling of a field make no difference), the job's state has changed, or the object exists already (an email, a bound target).",
			"One key maps to one message; refresh the job; never resend a job whose result is unknown.", "idempotency_conflict",
			`the Idempotency-Key "deploy-42" was already used for a different message or target list: one key maps to one message; use a new key for a new message`},
		{413, "PayloadTooLarge", fmt.Sprintf("The request body is larger than %d bytes.", maxBody), "Send a smaller message.", "body_too_large",
			fmt.Sprintf("the request body is larger than %d bytes: send a smaller message", maxBody)},
		{429, "TooManyRequests", fmt.Sprintf("%s, or the queue backlog is full (%d per bot, %d in all).", rate, l.BacklogPerBot, l.BacklogTotal),
			"Wait the Retry-After seconds, then retry with the same Idempotency-Key.", rateReason, rateMsg},
		{431, "HeaderTooLarge", "The request line and headers are larger than the limit (64 KiB by default).",
			"Send shorter headers (a large Cookie or Authorization header is the usual cause).", "header_too_large",
			"the request's line and headers are 70000 bytes; the limit is 65536: send shorter headers"},
		{500, "InternalError", "A server error, or the platform refused the message (error platform_failed; for a single send, data holds the message record).",
			"Read message; check the bot's platform connection. A server error was logged: retry later with the same Idempotency-Key.", "platform_failed",
			"the message was not delivered: telegram: Bad Request: chat not found"},
		{503, "ServiceUnavailable", "The service is restarting (draining), or a dependency is down.",
			"Resubmit later (after Retry-After) with the original key and the original message, to avoid a duplicate push.", "draining",
			"the service is restarting: resubmit later with the same Idempotency-Key and the same message"},
	}
}

// rateLimitHeaders are the headers that report a key's rate limit on
// every answer to a request whose key was admitted.
func rateLimitHeaders() []string {
	return []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
}

// apiSummary is the first paragraph of the document and of the docs page.
const apiSummary = "Herald sends text, Markdown and image messages through bots to bound targets on chat platforms, tracks every send as a job, makes resubmission idempotent and keeps a points balance per account."

// authErrors are the refusals any route with a key can answer.
func authErrors() []int { return []int{401, 403, 429, 500, 503} }

// routeErrors returns the error statuses of a route, sorted.
func routeErrors(rt Route) []int {
	st := append([]int{}, rt.Doc.Errors...)
	// Any request can have an over-long header.
	st = append(st, http.StatusRequestHeaderFieldsTooLarge)
	if rt.Auth {
		st = append(st, authErrors()...)
	}
	slices.Sort(st)
	return slices.Compact(st)
}

// securityNames are the two ways to send the key.
const (
	secBearer = "bearerAuth"
	secHeader = "apiKeyHeader"
	secCookie = "sessionCookie"
)

func (s *Server) buildOpenAPI(routes []Route) *openAPIDoc {
	l := s.eng.Limits()
	doc := &openAPIDoc{
		OpenAPI:           OpenAPIVersion,
		JSONSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
		Info: openAPIInfo{
			Title:       "Herald message push API",
			Version:     s.version,
			Description: apiDescription(l),
			License:     openAPILicense{Name: "Apache License 2.0", Identifier: "Apache-2.0"},
			Contact:     openAPIContact{Name: "Herald", URL: "https://github.com/heraldpush/herald"},
		},
		Servers: []openAPIServer{{URL: "/", Description: "this server (paths include /api)"}},
		Tags:    s.tags(),
		Paths:   make(map[string]map[string]*operation),
		Components: components{
			Schemas:   s.schemas(),
			Responses: map[string]response{},
			Parameters: map[string]parameter{
				"IdempotencyKey": {Name: "Idempotency-Key", In: "header", Example: "deploy-42",
					Description: "A client-chosen id of one logical push: 1 to 100 letters, digits, underscores, colons or hyphens. " +
						"The same key with the same message returns the original result and sends nothing (Idempotency-Replay: true); with another message it is 409. Kept 30 days, per account.",
					Schema: str("An Idempotency-Key.").with("minLength", 1, "maxLength", push.MaxIdempotencyKey, "pattern", "^[A-Za-z0-9_:-]+$")},
				"RequestId": {Name: "X-Request-Id", In: "header", Example: "trace-4bf92f35",
					Description: "An id for this request, echoed in the answer and written in the server's log line (at most 128 characters); one is generated when absent.",
					Schema:      str("A request id.").with("maxLength", 128)},
			},
			Headers: map[string]header{
				"X-Request-Id":        {Description: "The request's id: the one sent, or a generated one. The server's log line of the request carries it.", Required: true, Schema: str("A request id.")},
				"RateLimit-Limit":     {Description: "Requests the API key may make per minute (absent when the server has no rate limit).", Schema: integer("").with("minimum", 1)},
				"RateLimit-Remaining": {Description: "Requests the key may still make right now.", Schema: integer("").with("minimum", 0)},
				"RateLimit-Reset":     {Description: "Seconds until the key's full limit is available again.", Schema: integer("").with("minimum", 0)},
				"Retry-After":         {Description: "Seconds to wait before retrying.", Required: true, Schema: integer("").with("minimum", 1)},
				"Idempotency-Replay":  {Description: "true when the answer replays an earlier request with the same Idempotency-Key: nothing was sent again.", Schema: str("").with("enum", []string{"true"})},
			},
			SecuritySchemes: map[string]securityScheme{
				secBearer: {Type: "http", Scheme: "bearer",
					Description: "Recommended: Authorization: Bearer <API key>. Keys start with a service prefix and an underscore (hrd_…); they are shown once, when created."},
				secHeader: {Type: "apiKey", In: "header", Name: "X-Service-OpenAPI-Key",
					Description: "The older header, still accepted: X-Service-OpenAPI-Key: <API key>."},
				secCookie: {Type: "apiKey", In: "cookie", Name: SessionCookie,
					Description: "The management API only: the session cookie a sign-in sets (POST /api/manage/v1/sessions). A request with it that changes anything must come from this server's own pages."},
			},
		},
	}
	errName := make(map[int]string)
	for _, e := range errorDocs(l, s.maxBody) {
		errName[e.Status] = e.Name
		r := response{
			Description: e.Condition + " " + e.Handling,
			Headers:     map[string]any{"X-Request-Id": headerRef("X-Request-Id")},
			Content: map[string]mediaType{jsonType: {Schema: ref("Error"),
				Example: map[string]any{"code": e.Status, "message": e.Message, "error": e.Reason}}},
		}
		if e.Status != 401 && e.Status != 403 {
			for _, h := range rateLimitHeaders() {
				r.Headers[h] = headerRef(h)
			}
		}
		if e.Status == 429 || e.Status == 503 {
			r.Headers["Retry-After"] = headerRef("Retry-After")
		}
		doc.Components.Responses[e.Name] = r
	}
	for _, rt := range routes {
		path := openAPIPath(rt.Path)
		if doc.Paths[path] == nil {
			doc.Paths[path] = make(map[string]*operation)
		}
		op := &operation{
			OperationID: rt.Doc.ID,
			Summary:     rt.Summary,
			Description: rt.Doc.Description,
			Tags:        []string{rt.Doc.Tag},
			Security:    []map[string][]string{},
			Parameters:  []any{paramRef("RequestId")},
			Responses:   make(map[string]any),
		}
		switch {
		case rt.Auth && rt.Browser:
			op.Security = []map[string][]string{{secBearer: {}}, {secHeader: {}}, {secCookie: {}}}
		case rt.Auth:
			op.Security = []map[string][]string{{secBearer: {}}, {secHeader: {}}}
		}
		for _, p := range rt.Doc.Params {
			op.Parameters = append(op.Parameters, parameter{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required, Schema: p.Schema, Example: paramExample(p)})
		}
		if rt.Doc.Idempotent {
			op.Parameters = append(op.Parameters, paramRef("IdempotencyKey"))
		}
		if rt.Doc.Body != "" {
			op.RequestBody = &requestBody{Required: true, Content: map[string]mediaType{jsonType: {Schema: ref(rt.Doc.Body), Example: rt.Doc.BodyExample}}}
		}
		for _, a := range rt.Doc.Answers {
			r := response{Description: a.Description, Headers: map[string]any{"X-Request-Id": headerRef("X-Request-Id")}}
			for _, h := range a.Headers {
				r.Headers[h] = headerRef(h)
			}
			ct := a.ContentType
			if ct == "" {
				ct = jsonType
			}
			mt := mediaType{Example: a.Example}
			switch {
			case a.Schema != "":
				mt.Schema = ref(a.Schema)
			case ct == jsonType:
				mt.Schema = Schema{"type": "object"}
			}
			r.Content = map[string]mediaType{ct: mt}
			op.Responses[strconv.Itoa(a.Status)] = r
		}
		for _, st := range routeErrors(rt) {
			op.Responses[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/" + errName[st]}
		}
		doc.Paths[path][strings.ToLower(rt.Method)] = op
	}
	return doc
}

func headerRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/headers/" + name}
}

func paramRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/parameters/" + name}
}

// apiDescription is the document's introduction: how to call the API and
// how to read its answers.
func apiDescription(l push.Limits) string {
	var b strings.Builder
	b.WriteString(apiSummary + "\n\n")
	b.WriteString("Every endpoint under /api/openapi needs an API key: `Authorization: Bearer <API key>` (recommended) or `X-Service-OpenAPI-Key: <API key>`. Request bodies are JSON. Reading these documents (/api/docs, /api/openapi.json) needs no key.\n\n")
	b.WriteString("Result-reading rules (apply to every send):\n\n")
	for i, r := range readingRules() {
		fmt.Fprintf(&b, "%d. %s\n", i+1, r)
	}
	b.WriteString("\nLimits in force on this server:\n\n")
	for _, lim := range limitRows(l) {
		fmt.Fprintf(&b, "- %s: %s\n", lim[0], lim[1])
	}
	b.WriteString("\nEvery refusal charges, queues and sends nothing, and its body is `{\"code\": <HTTP status>, \"message\": \"<what is wrong and what to do>\", \"error\": \"<stable reason>\"}`. " +
		"A path that does not exist answers 404 (error route_not_found), a method a path does not take answers 405 (error method_not_allowed), and a path with a control character (such as %00) answers 400 (error invalid_path), with the same body.")
	return b.String()
}

// readingRules are the result-reading rules of section 1 of the contract.
func readingRules() []string {
	return []string{
		"Check `code` in the body first (0 means the request was accepted). Then check the status of each message.",
		"A single send is successful only if `status` is `SUCCESS` (in a job: `succeeded`).",
		"HTTP 202 or `pending=true` means still processing.",
		"`uncertain=true` means delivery is waiting for verification (the platform may have received the message).",
		"Pending and uncertain items count as neither success nor failure. Never treat a queued item as delivered.",
		"For batch answers, inspect every element of `results`.",
		"For an unknown result, do not resend: query the job (GET /api/openapi/queue/{id}), or recover a single send by its Idempotency-Key (GET /api/openapi/queue-request).",
	}
}

// limitRows are the limits in force, as label and value.
func limitRows(l push.Limits) [][2]string {
	rate := fmt.Sprintf("%d requests per minute per API key (429 with Retry-After beyond)", l.RatePerMinute)
	if l.RatePerMinute < 0 {
		rate = "no limit on this server"
	}
	return [][2]string{
		{"Plain text and Markdown content", fmt.Sprintf("at most %d characters (Unicode code points)", l.MaxContent)},
		{"Targets per batch send", fmt.Sprintf("at most %d", l.MaxTargets)},
		{"Targets per multi-bot batch", fmt.Sprintf("at most %d in total across all groups", l.MaxTargets)},
		{"Synchronous wait of a send", fmt.Sprintf("%s; then HTTP 202 with a jobId", duration(l.SyncWait))},
		{"Batch wait", fmt.Sprintf("%s in total; unfinished items return a jobId and the status queued", duration(l.SyncWait))},
		{"Idempotency-Key", "1 to 100 characters: letters, digits, underscore, colon, hyphen"},
		{"Idempotency record retention", fmt.Sprintf("%d days", int(l.IdempotencyTTL.Hours()/24))},
		{"Idempotency scope", "same account and same key must be the same message; a replayed batch needs an identical message and target list"},
		{"Rate", rate},
		{"Queue backlog", fmt.Sprintf("at most %d queued or sending per bot and %d across the service; beyond that, 429", l.BacklogPerBot, l.BacklogTotal)},
		{"Queue wait", fmt.Sprintf("a job not started within %s expires and its points are returned", duration(l.QueueWait))},
	}
}

// duration formats d without zero trailing units: 1h, 1h30m, 8s.
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// serveOpenAPI answers the OpenAPI document.
func (s *Server) serveOpenAPI(w http.ResponseWriter, req bunrouter.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Access-Control-Allow-Origin", "*")
	_, err := w.Write(s.openAPIJSON)
	return err
}

// OpenAPI returns the OpenAPI document that GET /api/openapi.json serves.
func (s *Server) OpenAPI() []byte { return slices.Clone(s.openAPIJSON) }

func marshalDoc(doc *openAPIDoc) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(fmt.Sprintf("transport: the OpenAPI document does not encode: %v", err)) // a programming error
	}
	return buf.Bytes()
}

// paramExample is a parameter's example in the type of its schema (the
// route table writes every example as text, as it goes in a URL).
func paramExample(p Param) any {
	if p.Example == "" {
		return nil
	}
	if p.Schema["type"] == "integer" {
		if n, err := strconv.ParseInt(p.Example, 10, 64); err == nil {
			return n
		}
	}
	return p.Example
}
