package transport

import (
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
	Auth bool
	// Browser says the route serves people in browsers too: a session
	// cookie authenticates it as well as an API key (when Auth), and its
	// unsafe requests must come from this server's own pages.
	Browser bool
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

// section is one resource of the API: its routes and the component
// schemas they name. Each lives in the file of its handlers' resource
// (<resource>_routes.go), with its examples, so that a new resource adds a
// file rather than length.
type section struct {
	tags    []openAPITag // the groups its routes are in, in order
	routes  []Route
	schemas map[string]Schema
}

// sections are every resource of the API, in the order the documents list
// them.
func (s *Server) sections() []section {
	p := newSchemaParts(s.eng.Limits())
	return []section{
		s.sendSection(p),
		s.batchSection(p),
		s.jobSection(p),
		s.sessionSection(),
		s.userSection(),
		s.keySection(),
		s.botSection(),
		s.manageJobSection(p),
		s.accountSection(),
		s.hookSection(),
		s.operationSection(),
		{schemas: errorSchemas()},
		{schemas: objectSchemas()},
	}
}

// tags are every section's tags, in order.
func (s *Server) tags() []openAPITag {
	var all []openAPITag
	for _, sec := range s.sections() {
		all = append(all, sec.tags...)
	}
	return all
}

// routes is the route table: every section's routes.
func (s *Server) routes() []Route {
	var all []Route
	for _, sec := range s.sections() {
		all = append(all, sec.routes...)
	}
	return all
}

// schemas are the document's component schemas: every section's. A name
// given twice is a bug of the table.
func (s *Server) schemas() map[string]Schema {
	all := make(map[string]Schema)
	for _, sec := range s.sections() {
		for name, sc := range sec.schemas {
			if _, dup := all[name]; dup {
				panic("transport: the component schema " + name + " is defined twice")
			}
			all[name] = sc
		}
	}
	return all
}

// sendHeaders are the headers of a send's answer: those of every answer to
// a request with a key, and Idempotency-Replay.
func sendHeaders() []string { return append(rateLimitHeaders(), "Idempotency-Replay") }

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
