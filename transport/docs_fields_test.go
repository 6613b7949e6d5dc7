package transport_test

import (
	"encoding/json"
	"html"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/heraldpush/herald/internal/testkit"
)

// openAPIMap is the server's OpenAPI document as plain JSON values.
func openAPIMap(t *testing.T, h *testkit.Herald) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(h.API.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// fieldPaths walks a body's schema as a reader of the docs would: every
// property, and the properties of the objects in it as data.field or
// items[].field, three levels down.
func fieldPaths(schemas map[string]any, s map[string]any, prefix string) []string {
	s = deref(schemas, s)
	props, _ := s["properties"].(map[string]any)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := props[name].(map[string]any)
		out = append(out, prefix+name)
		if strings.Count(prefix, ".") >= 3 {
			continue
		}
		if items, ok := p["items"].(map[string]any); ok {
			if obj := deref(schemas, items); obj["type"] == "object" {
				out = append(out, fieldPaths(schemas, obj, prefix+name+"[].")...)
			}
		} else if obj := deref(schemas, p); obj["type"] == "object" {
			out = append(out, fieldPaths(schemas, obj, prefix+name+".")...)
		}
	}
	return out
}

// deref follows a $ref (or the $ref of a $ref-or-null) to its schema.
func deref(schemas map[string]any, s map[string]any) map[string]any {
	if one, ok := s["oneOf"].([]any); ok {
		for _, o := range one {
			if m := o.(map[string]any); m["type"] != "null" {
				s = m
				break
			}
		}
	}
	if r, ok := s["$ref"].(string); ok {
		return schemas[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any)
	}
	return s
}

// jsonSchemaOf is the schema of a request body or an answer in the
// document, or nil (an answer that refers to a shared error answer, a
// page).
func jsonSchemaOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	content, _ := m["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	s, _ := js["schema"].(map[string]any)
	return s
}

// TestDocsDescribeEveryField: the docs page describes every field of
// every body an operation takes and of every answer it gives (the error
// envelope has its own section), in that operation's section.
func TestDocsDescribeEveryField(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart())
	doc := openAPIMap(t, h)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	page := string(h.CallRoot(t, "GET", "/api/docs").Body)
	checked := 0
	for _, path := range slices.Sorted(maps.Keys(doc["paths"].(map[string]any))) {
		ops := doc["paths"].(map[string]any)[path].(map[string]any)
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op, ok := ops[method].(map[string]any)
			if !ok {
				continue
			}
			id := op["operationId"].(string)
			start := strings.Index(page, `<h3 class="endpoint" id="`+id+`">`)
			if start < 0 {
				t.Errorf("%s %s: no section %s on the page", method, path, id)
				continue
			}
			section := page[start:]
			if end := strings.Index(section, `<section class="op"`); end > 0 {
				section = section[:end]
			}
			bodies := map[string]map[string]any{"request body": jsonSchemaOf(op["requestBody"])}
			for status, r := range op["responses"].(map[string]any) {
				bodies["answer "+status] = jsonSchemaOf(r)
			}
			for what, s := range bodies {
				if s == nil {
					continue
				}
				for _, f := range fieldPaths(schemas, s, "") {
					checked++
					if !strings.Contains(section, "<code>"+html.EscapeString(f)+"</code>") {
						t.Errorf("%s %s: the %s's field %s is not described", method, path, what, f)
					}
				}
			}
		}
	}
	if checked < 500 {
		t.Fatalf("checked %d fields: the walk of the document found too few", checked)
	}
	t.Logf("%d fields described", checked)
}

// TestDocsSchemaView: /api/docs/schemas has a section per schema of the
// document with each of its properties, every link to a schema lands on
// one, and it is served as the docs page is (no key, its own CSP).
func TestDocsSchemaView(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart())
	doc := openAPIMap(t, h)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	r := h.CallRoot(t, "GET", "/api/docs/schemas")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET /api/docs/schemas: %d %v", r.Status, r.Header)
	}
	page := string(r.Body)
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		start := strings.Index(page, `id="schema-`+name+`"`)
		if start < 0 {
			t.Errorf("schema %s has no section", name)
			continue
		}
		section := page[start:]
		if end := strings.Index(section, `<section class="schema"`); end > 0 {
			section = section[:end]
		}
		props, _ := schemas[name].(map[string]any)["properties"].(map[string]any)
		for _, p := range slices.Sorted(maps.Keys(props)) {
			if !strings.Contains(section, "<code>"+html.EscapeString(p)+"</code>") {
				t.Errorf("schema %s: field %s is not listed", name, p)
			}
		}
	}
	links := regexp.MustCompile(`href="#(schema-[A-Za-z0-9]+)"`).FindAllStringSubmatch(page, -1)
	for _, l := range links {
		if !strings.Contains(page, `id="`+l[1]+`"`) {
			t.Errorf("link to #%s lands nowhere", l[1])
		}
	}
	if len(links) < len(schemas)+40 { // the contents, and the fields that hold schemas
		t.Errorf("%d links to schemas for %d schemas", len(links), len(schemas))
	}
	if !strings.Contains(page, `href="/api/docs#sendPrivate"`) {
		t.Error("the schemas do not link to the operations that use them")
	}
}

// TestDocsSchemaViewInChromium loads the schema view in real headless
// Chromium: one visible section per schema, nothing asked of the network
// but the test server.
func TestDocsSchemaViewInChromium(t *testing.T) {
	ctx := testkit.Chromium(t, 90*time.Second)
	h := testkit.New(t, testkit.WithoutStart())
	schemas := openAPIMap(t, h)["components"].(map[string]any)["schemas"].(map[string]any)
	rec := recordRequests(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(h.Root+"/api/docs/schemas"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("load the schema view: %v", err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("section.schema h3").length`))
	if err != nil {
		t.Fatal(err)
	}
	if n != len(schemas) {
		t.Errorf("%d schema sections, want %d", n, len(schemas))
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView("#schema-MessageRecord"), chromedp.WaitVisible("#schema-MessageRecord")); err != nil {
		t.Errorf("the MessageRecord schema is not visible: %v", err)
	}
	if out := rec.outside(t, ctx, h.Root); len(out) > 0 {
		t.Errorf("the page requested %v, outside the test server", out)
	}
}
