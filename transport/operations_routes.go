package transport

import "net/http"

// operationSection is what needs no key: the documents, the probes and
// the metrics.
func (s *Server) operationSection() section {
	ready := Answer{Status: 200, Description: "Ready: the database (and Redis, where configured) answers.", Schema: "Readiness",
		Example: map[string]any{"status": "ready", "checks": map[string]any{"database": "ok"}}}
	routes := []Route{
		{Method: http.MethodGet, Path: BasePath + "/openapi.json", Summary: "This API's OpenAPI document", Auth: false, Doc: Doc{
			ID: "openAPI", Tag: "operations", Description: "The OpenAPI 3.1 document of every endpoint. No key needed.",
			Answers: []Answer{{Status: 200, Description: "The OpenAPI document.", Schema: "", Example: nil}},
		}, Handler: s.serveOpenAPI},
		{Method: http.MethodGet, Path: BasePath + "/docs", Summary: "This API's documentation page", Auth: false, Doc: Doc{
			ID: "docs", Tag: "operations", Description: "This page: the API documentation, readable without a key and without any other network access.",
			Answers: []Answer{{Status: 200, Description: "An HTML page.", ContentType: "text/html"}},
		}, Handler: s.serveDocs},
		{Method: http.MethodGet, Path: BasePath + "/docs/schemas", Summary: "This API's schemas, one by one", Auth: false, Doc: Doc{
			ID: "docsSchemas", Tag: "operations", Description: "The same document as a page per schema: every body the endpoints take and answer, field by field, each field that holds another schema linked to it. No key needed.",
			Answers: []Answer{{Status: 200, Description: "An HTML page.", ContentType: "text/html"}},
		}, Handler: s.serveSchemas},
		{Method: http.MethodGet, Path: "/healthz", Summary: "Liveness probe", Auth: false, Doc: Doc{
			ID: "healthz", Tag: "operations", Description: "Answers 200 while the process is up (also while it drains).",
			Answers: []Answer{{Status: 200, Description: "The process is up.", Schema: "Health", Example: map[string]any{"status": "ok"}}},
		}, Handler: s.healthz},
		{Method: http.MethodGet, Path: "/readyz", Summary: "Readiness probe", Auth: false, Doc: Doc{
			ID: "readyz", Tag: "operations",
			Description: "Answers 200 when this process can take traffic: the database answers (and Redis, where configured). " +
				"It answers 503 with Retry-After while the process drains (stops taking sends) or when a dependency is down.",
			Answers: []Answer{ready,
				{Status: 503, Description: "Not ready: draining, or a dependency is down.", Schema: "Readiness", Headers: []string{"Retry-After"},
					Example: map[string]any{"status": "unavailable", "checks": map[string]any{"database": "failing"}}}},
		}, Handler: s.readyz},
		{Method: http.MethodGet, Path: "/metrics", Summary: "Prometheus metrics", Auth: false, Doc: Doc{
			ID: "metrics", Tag: "operations",
			Description: "Metrics in the Prometheus text format: requests by route and status with latencies, jobs by platform and state, the backlog, platform call latencies, points charged and refunded, idempotent replays and rate-limit refusals.",
			Answers: []Answer{{Status: 200, Description: "The metrics.", ContentType: "text/plain"},
				{Status: 404, Description: "Metrics are not enabled on this server.", Schema: "Error"}},
		}, Handler: s.serveMetrics},
	}
	return section{tags: []openAPITag{{"operations", "Documents, probes and metrics; no key needed."}}, routes: routes, schemas: map[string]Schema{
		"Health": object("The process is up.", true,
			req("status", str("ok").with("const", "ok")),
		),
		"Readiness": object("Whether this process can take traffic, and the state of each dependency.", true,
			req("status", str("ready; draining while the process stops; unavailable when a dependency is down.").with("enum", []string{"ready", "draining", "unavailable"})),
			req("checks", Schema{"type": "object", "description": "Each dependency (database, and Redis where configured): ok, or failing.",
				"additionalProperties": Schema{"type": "string", "enum": []string{"ok", "failing"}}}),
		),
	}}
}
