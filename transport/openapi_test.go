package transport_test

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

// TestOpenAPIDocumentIsValid31 validates the served document with
// kin-openapi (examples included) for several configurations, and finds
// the limits in force in it.
func TestOpenAPIDocumentIsValid31(t *testing.T) {
	tests := []struct {
		name       string
		limits     push.Limits
		maxTargets int
		says       string
	}{
		{"defaults", push.Limits{}, 50, "120 requests per minute per API key"},
		{"no rate limit, 20 targets", push.Limits{RatePerMinute: -1, MaxTargets: 20}, 20, "Rate: no limit on this server"},
		{"stricter", push.Limits{RatePerMinute: 30, MaxContent: 500, SyncWait: 3 * time.Second}, 50, "at most 500 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testkit.New(t, testkit.WithLimits(tt.limits))
			r := h.CallRoot(t, "GET", "/api/openapi.json") // no key
			if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("GET /api/openapi.json: %d %v", r.Status, r.Header)
			}
			c, err := testkit.LoadContract(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(t.Context()); err != nil {
				t.Fatal(err)
			}
			if c.Doc.OpenAPI != transport.OpenAPIVersion || !strings.HasPrefix(c.Doc.OpenAPI, "3.1.") {
				t.Fatalf("openapi %q", c.Doc.OpenAPI)
			}
			if string(r.Body) != string(h.API.OpenAPI()) {
				t.Fatal("the served document differs from Server.OpenAPI")
			}
			ids := c.Doc.Components.Schemas["BatchSendRequest"].Value.Properties["target_ids"].Value
			if ids.MaxItems == nil || int(*ids.MaxItems) != tt.maxTargets {
				t.Fatalf("target_ids maxItems %v, want %d", ids.MaxItems, tt.maxTargets)
			}
			if !strings.Contains(c.Doc.Info.Description, tt.says) {
				t.Fatalf("the description does not say %q:\n%s", tt.says, c.Doc.Info.Description)
			}
		})
	}
}

// TestEveryRouteIsDocumentedAndEveryDocumentedRouteExists compares the
// router's table with the document both ways, and calls every documented
// operation to see the server route it.
func TestEveryRouteIsDocumentedAndEveryDocumentedRouteExists(t *testing.T) {
	h := testkit.New(t)
	doc := h.Contract(t).Doc
	var routed, documented []string
	ids := map[string]bool{}
	for _, rt := range h.API.Routes() {
		routed = append(routed, rt.Method+" "+transport.OpenAPIPath(rt.Path))
		if ids[rt.Doc.ID] {
			t.Errorf("operationId %q is used twice", rt.Doc.ID)
		}
		ids[rt.Doc.ID] = true
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented = append(documented, method+" "+path)
			if !ids[op.OperationID] {
				t.Errorf("%s %s: operationId %q is not in the route table", method, path, op.OperationID)
			}
		}
	}
	sort.Strings(routed)
	sort.Strings(documented)
	if diff := cmp.Diff(routed, documented); diff != "" {
		t.Fatalf("routes (-router +document):\n%s", diff)
	}
	// The six endpoints of the contract and the cancel extension.
	for _, want := range []string{
		"POST /api/openapi/v1/push/private", "POST /api/openapi/send", "POST /api/openapi/batch-send",
		"POST /api/openapi/v1/push/batch", "GET /api/openapi/queue/{id}", "GET /api/openapi/queue-request",
		"POST /api/openapi/queue/{id}/cancel", "GET /api/openapi.json", "GET /api/docs", "GET /healthz", "GET /readyz", "GET /metrics",
	} {
		if !slices.Contains(documented, want) {
			t.Errorf("%s is not documented", want)
		}
	}
	// Every documented operation is served: none answers route_not_found
	// or method_not_allowed.
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = strings.ReplaceAll(path, "{id}", "0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10")
		r := h.CallRoot(t, method, path)
		if e := r.JSON()["error"]; e == "route_not_found" || e == "method_not_allowed" {
			t.Errorf("%s: %d %s", op, r.Status, r.Body)
		}
	}
}

// TestDocumentCoversAuthIdempotencyAndErrors checks what every operation
// must state: both key schemes on the routes that need a key, the
// Idempotency-Key on sends, every error status with the error body, and
// the headers Herald always or conditionally sets.
func TestDocumentCoversAuthIdempotencyAndErrors(t *testing.T) {
	h := testkit.New(t)
	doc := h.Contract(t).Doc
	bearer := doc.Components.SecuritySchemes["bearerAuth"]
	header := doc.Components.SecuritySchemes["apiKeyHeader"]
	if bearer == nil || bearer.Value.Type != "http" || bearer.Value.Scheme != "bearer" {
		t.Fatalf("bearer scheme: %+v", bearer)
	}
	if header == nil || header.Value.Type != "apiKey" || header.Value.In != "header" || header.Value.Name != "X-Service-OpenAPI-Key" {
		t.Fatalf("header scheme: %+v", header)
	}
	for _, rt := range h.API.Routes() {
		op := doc.Paths.Find(transport.OpenAPIPath(rt.Path)).GetOperation(rt.Method)
		name := rt.Method + " " + rt.Path
		var schemes []string
		for _, req := range *op.Security {
			for s := range req {
				schemes = append(schemes, s)
			}
		}
		sort.Strings(schemes)
		wantSchemes := []string(nil)
		switch {
		case rt.Auth && rt.Browser:
			wantSchemes = []string{"apiKeyHeader", "bearerAuth", "sessionCookie"}
		case rt.Auth:
			wantSchemes = []string{"apiKeyHeader", "bearerAuth"}
		}
		if diff := cmp.Diff(wantSchemes, schemes); diff != "" {
			t.Errorf("%s security (-want +got):\n%s", name, diff)
		}
		hasKey := false
		for _, p := range op.Parameters {
			if p.Value.In == "header" && p.Value.Name == "Idempotency-Key" {
				hasKey = true
			}
		}
		if isSend := strings.Contains(rt.Path, "push") || strings.HasSuffix(rt.Path, "send"); hasKey != isSend {
			t.Errorf("%s: Idempotency-Key documented %v, want %v", name, hasKey, isSend)
		}
		wantErrors := map[int]bool{}
		if rt.Auth {
			for _, st := range []int{401, 403, 429, 500, 503} {
				wantErrors[st] = true
			}
		}
		if rt.Doc.Body != "" {
			wantErrors[400], wantErrors[413] = true, true
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				t.Errorf("%s: no JSON request body", name)
			}
		}
		for code, resp := range op.Responses.Map() {
			r := resp.Value
			if r.Headers["X-Request-Id"] == nil || !r.Headers["X-Request-Id"].Value.Required {
				t.Errorf("%s %s: X-Request-Id is not a required header", name, code)
			}
			if code >= "400" && rt.Auth {
				mt := r.Content.Get("application/json")
				if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" && mt.Schema.Value != doc.Components.Schemas["Error"].Value {
					t.Errorf("%s %s: the answer is not the Error schema", name, code)
				}
			}
			if code == "429" || code == "503" {
				ra := r.Headers["Retry-After"]
				if ra == nil || !ra.Value.Required {
					t.Errorf("%s %s: Retry-After is not a required header", name, code)
				}
			}
			if rt.Auth && code != "401" && code != "403" {
				for _, hn := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
					if r.Headers[hn] == nil {
						t.Errorf("%s %s: %s is not documented", name, code, hn)
					}
				}
			}
		}
		for st := range wantErrors {
			if op.Responses.Status(st) == nil {
				t.Errorf("%s: status %d is not documented", name, st)
			}
		}
	}
}

// TestContractCatchesMismatches proves the check of every answer can
// fail: answers that break the document in different ways are refused.
func TestContractCatchesMismatches(t *testing.T) {
	h := testkit.New(t)
	c := h.Contract(t)
	hdr := func(kv ...string) http.Header {
		out := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"r1"}}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	record := `{"id":1,"bot":1,"user":1,"content":"x","msg_type":0,"status":"SUCCESS","platformIndex":"1:1","jobId":"0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10","pending":false,"uncertain":false}`
	tests := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		ok                 bool
	}{
		{"a valid send answer", "POST", "/api/openapi/v1/push/private", 200, hdr(), `{"code":0,"message":"","data":` + record + `}`, true},
		{"a valid error", "POST", "/api/openapi/send", 404, hdr(), `{"code":404,"message":"no","error":"bot_not_found"}`, true},
		{"a field missing", "POST", "/api/openapi/v1/push/private", 200, hdr(), `{"code":0,"message":"","data":{"id":1}}`, false},
		{"an undocumented field", "POST", "/api/openapi/v1/push/private", 200, hdr(), `{"code":0,"message":"","data":` + strings.Replace(record, `"id":1`, `"id":1,"secret":"x"`, 1) + `}`, false},
		{"a status outside its enum", "POST", "/api/openapi/v1/push/private", 200, hdr(), `{"code":0,"message":"","data":` + strings.Replace(record, "SUCCESS", "DONE", 1) + `}`, false},
		{"a nonzero code on success", "POST", "/api/openapi/v1/push/private", 200, hdr(), `{"code":1,"message":"","data":` + record + `}`, false},
		{"an undocumented status", "GET", "/api/openapi/queue/0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10", 418, hdr(), `{"code":418,"message":"x","error":"teapot"}`, false},
		{"a 429 without Retry-After", "POST", "/api/openapi/batch-send", 429, hdr(), `{"code":429,"message":"x","error":"rate_limited"}`, false},
		{"a 503 with Retry-After", "POST", "/api/openapi/batch-send", 503, hdr("Retry-After", "5"), `{"code":503,"message":"x","error":"draining"}`, true},
		{"a Retry-After that is not a number", "POST", "/api/openapi/batch-send", 503, hdr("Retry-After", "soon"), `{"code":503,"message":"x","error":"draining"}`, false},
		{"no X-Request-Id", "GET", "/healthz", 200, http.Header{"Content-Type": {"application/json"}}, `{"status":"ok"}`, false},
		{"a header the answer does not document", "GET", "/api/openapi/queue/0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10", 404, hdr("Idempotency-Replay", "true"), `{"code":404,"message":"x","error":"job_not_found"}`, false},
		{"the wrong content type", "GET", "/healthz", 200, hdr("Content-Type", "text/plain"), `ok`, false},
		{"an error body without its reason", "GET", "/api/openapi/queue-request", 400, hdr(), `{"code":400,"message":"x"}`, false},
		{"an unknown path answered 200", "GET", "/api/nowhere", 200, hdr(), `{}`, false},
		{"an unknown path answered 404", "GET", "/api/nowhere", 404, hdr(), `{"code":404,"message":"no such endpoint","error":"route_not_found"}`, true},
		{"an unknown path answered 404 without the error body", "GET", "/api/nowhere", 404, hdr(), `{"code":404}`, false},
		{"a method the path does not take answered 405", "GET", "/api/openapi/batch-send", 405, hdr(), `{"code":405,"message":"no","error":"method_not_allowed"}`, true},
		{"a method the path does not take answered 200", "GET", "/api/openapi/batch-send", 200, hdr(), `{"code":0,"message":"","data":null}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, h.Root+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Check(req, tt.status, tt.header, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Fatalf("check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
