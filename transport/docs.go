package transport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/uptrace/bunrouter"
)

//go:embed docs.html
var docsTemplate string

//go:embed docs_schemas.html
var schemasTemplate string

//go:embed docs_style.html
var docsStyle string

// docsTemplates parses a page of the docs with the style both share.
func docsTemplates(name, page string) *template.Template {
	return template.Must(template.New(name).Funcs(template.FuncMap{
		"lower": strings.ToLower,
		"code":  codeSpans,
	}).Parse(docsStyle + page))
}

// docsPage is what the docs page shows, all of it taken from the OpenAPI
// document and the route table.
type docsPage struct {
	Title   string
	Version string
	Intro   string
	Rules   []string
	Limits  [][2]string
	Errors  []errorDoc
	Groups  []docsGroup
	Schemes []docsScheme
}

type docsScheme struct{ Name, Header, Description string }

type docsGroup struct {
	Name, Description string
	Ops               []docsOp
}

type docsOp struct {
	ID, Method, Path, Summary, Description string
	Auth                                   bool
	Params                                 []docsField
	Fields                                 []docsField
	Answers                                []docsAnswer
	Errors                                 []docsAnswer
	Curl                                   string
}

type docsField struct {
	Name, In, Type string
	Required       bool
	Rule           string
	// Ref names the component schema of the field's value, if it has one
	// (the schema page links to it).
	Ref string
}

type docsAnswer struct {
	Status  int
	Text    string
	Example string
	Fields  []docsField // of the body, nested fields as data.field
}

// renderDocs renders the docs page from the document.
func (s *Server) renderDocs(doc *openAPIDoc, routes []Route) []byte {
	tmpl := docsTemplates("docs", docsTemplate)
	l := s.eng.Limits()
	page := docsPage{
		Title:   doc.Info.Title,
		Version: doc.Info.Version,
		Rules:   readingRules(),
		Limits:  limitRows(l),
		Errors:  errorDocs(l, s.maxBody),
		Intro:   apiSummary + " Request and answer bodies are JSON.",
	}
	for _, name := range []string{secBearer, secHeader, secCookie} {
		sc := doc.Components.SecuritySchemes[name]
		h := "Authorization: Bearer <API key>"
		switch {
		case sc.In == "cookie":
			h = "Cookie: " + sc.Name + "=<session>"
		case sc.Type == "apiKey":
			h = sc.Name + ": <API key>"
		}
		page.Schemes = append(page.Schemes, docsScheme{Name: name, Header: h, Description: sc.Description})
	}
	errText := make(map[int]string)
	for _, e := range page.Errors {
		errText[e.Status] = e.Condition
	}
	for _, tag := range doc.Tags {
		g := docsGroup{Name: tag.Name, Description: tag.Description}
		for _, rt := range routes {
			if rt.Doc.Tag != tag.Name {
				continue
			}
			op := docsOp{ID: rt.Doc.ID, Method: rt.Method, Path: openAPIPath(rt.Path), Summary: rt.Summary, Description: rt.Doc.Description, Auth: rt.Auth}
			for _, p := range rt.Doc.Params {
				op.Params = append(op.Params, docsField{Name: p.Name, In: p.In, Type: typeOf(p.Schema), Required: p.Required, Rule: p.Description + constraints(p.Schema)})
			}
			if rt.Doc.Idempotent {
				p := doc.Components.Parameters["IdempotencyKey"]
				op.Params = append(op.Params, docsField{Name: p.Name, In: p.In, Type: "string", Rule: p.Description})
			}
			switch {
			case rt.Auth && rt.Browser:
				op.Params = append(op.Params, docsField{Name: "Authorization", In: "header", Type: "string", Required: true,
					Rule: "Bearer <API key> (or X-Service-OpenAPI-Key: <API key>), or instead the session cookie " + SessionCookie + " of a sign-in."})
			case rt.Auth:
				op.Params = append(op.Params, docsField{Name: "Authorization", In: "header", Type: "string", Required: true,
					Rule: "Bearer <API key> (or the older X-Service-OpenAPI-Key: <API key>)."})
			}
			if rt.Doc.Body != "" {
				op.Fields = fieldsOf(doc.Components.Schemas, doc.Components.Schemas[rt.Doc.Body], "")
			}
			for _, a := range rt.Doc.Answers {
				ans := docsAnswer{Status: a.Status, Text: a.Description, Example: prettyJSON(a.Example)}
				if a.Schema != "" {
					ans.Fields = fieldsOf(doc.Components.Schemas, doc.Components.Schemas[a.Schema], "")
				}
				op.Answers = append(op.Answers, ans)
			}
			for _, st := range routeErrors(rt) {
				op.Errors = append(op.Errors, docsAnswer{Status: st, Text: errText[st]})
			}
			op.Curl = curlExample(rt)
			g.Ops = append(g.Ops, op)
		}
		page.Groups = append(page.Groups, g)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, page); err != nil {
		panic(fmt.Sprintf("transport: the docs page does not render: %v", err)) // a programming error
	}
	return buf.Bytes()
}

// serveDocs answers the docs page. Its Content-Security-Policy forbids
// every load but its own inline style: the page needs no network.
func (s *Server) serveDocs(w http.ResponseWriter, req bunrouter.Request) error {
	return s.writeDocsPage(w, s.docsHTML)
}

// writeDocsPage answers a page of the docs.
func (s *Server) writeDocsPage(w http.ResponseWriter, page []byte) error {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(page)
	return err
}

// fieldsOf lists an object schema's fields in their documented order,
// and the fields of the objects in them after each: data.jobId, and the
// fields of objects in arrays as items[].id.
func fieldsOf(all map[string]Schema, s Schema, prefix string) []docsField {
	s, _ = resolve(all, s)
	var out []docsField
	eachField(all, s, func(f docsField, ps Schema) {
		name := f.Name
		f.Name, f.In = prefix+name, "body"
		out = append(out, f)
		if strings.Count(prefix, ".") >= 3 {
			return // deep enough: the schema page has the rest
		}
		if items, ok := ps["items"].(Schema); ok {
			if obj, _ := resolve(all, items); obj["type"] == "object" {
				out = append(out, fieldsOf(all, obj, prefix+name+"[].")...)
			}
		} else if obj, _ := resolve(all, ps); obj["type"] == "object" {
			out = append(out, fieldsOf(all, obj, prefix+name+".")...)
		}
	})
	return out
}

// eachField calls fn with each property of an object schema, in its
// documented order, described as a field (its name, type, whether it is
// required, its description and limits), and with its schema.
func eachField(all map[string]Schema, s Schema, fn func(f docsField, ps Schema)) {
	props, _ := s["properties"].(map[string]any)
	order, _ := s["x-order"].([]string)
	required, _ := s["required"].([]string)
	for _, name := range order {
		ps := props[name].(Schema)
		fn(docsField{Name: name, Type: typeOf(ps), Required: slices.Contains(required, name),
			Rule: strings.TrimSpace(fmt.Sprint(valueSchema(all, ps)["description"])) + constraints(ps)}, ps)
	}
}

// resolve returns the schema a $ref (or a $ref or null) stands for, and
// the component's name; other schemas as they are.
func resolve(all map[string]Schema, s Schema) (Schema, string) {
	if one, ok := s["oneOf"].([]any); ok {
		for _, o := range one {
			if os, ok := o.(Schema); ok && os["type"] != "null" {
				s = os
				break
			}
		}
	}
	if r, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		return all[name], name
	}
	return s, ""
}

// valueSchema is a property's own schema, or the one it refers to when
// it says nothing itself.
func valueSchema(all map[string]Schema, s Schema) Schema {
	if _, ok := s["description"]; ok {
		return s
	}
	r, _ := resolve(all, s)
	return r
}

// typeOf names a schema's type for the docs: integer, string[], …
func typeOf(s Schema) string {
	if one, ok := s["oneOf"].([]any); ok {
		var ts []string
		for _, o := range one {
			if os, ok := o.(Schema); ok {
				ts = append(ts, typeOf(os))
			}
		}
		return strings.Join(ts, " or ")
	}
	if _, ok := s["$ref"]; ok {
		return "object"
	}
	switch t := s["type"].(type) {
	case string:
		if t == "array" {
			if items, ok := s["items"].(Schema); ok {
				if items["type"] == "object" {
					return "object[]"
				}
				return typeOf(items) + "[]"
			}
		}
		return t
	case []string:
		return strings.Join(t, " or ")
	}
	return "any"
}

// constraints spells a schema's limits out for the docs.
func constraints(s Schema) string {
	var parts []string
	if e, ok := s["enum"]; ok {
		parts = append(parts, "one of "+strings.Join(strings.Fields(strings.Trim(fmt.Sprint(e), "[]")), ", "))
	}
	for _, k := range []struct{ key, text string }{
		{"minItems", "at least %v items"}, {"maxItems", "at most %v items"},
		{"minLength", "at least %v characters"}, {"maxLength", "at most %v characters"},
		{"pattern", "matches %v"},
	} {
		if v, ok := s[k.key]; ok {
			parts = append(parts, fmt.Sprintf(k.text, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// curlExample is a curl command that calls the route with its examples.
func curlExample(rt Route) string {
	path := rt.Path
	var query []string
	for _, p := range rt.Doc.Params {
		switch p.In {
		case "path":
			path = strings.ReplaceAll(path, ":"+p.Name, p.Example)
		case "query":
			query = append(query, p.Name+"="+p.Example)
		}
	}
	sort.Strings(query)
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	lines := []string{"curl -s"}
	if rt.Method != http.MethodGet {
		lines[0] += " -X " + rt.Method
	}
	lines[0] += ` "$HERALD_URL` + path + `"`
	if rt.Auth {
		lines = append(lines, `-H "Authorization: Bearer $HERALD_KEY"`)
	}
	if rt.Doc.Idempotent {
		lines = append(lines, `-H 'Idempotency-Key: deploy-42'`)
	}
	if rt.Doc.Body != "" {
		body, _ := json.Marshal(rt.Doc.BodyExample)
		lines = append(lines, `-H 'Content-Type: application/json'`, "-d '"+string(body)+"'")
	}
	return strings.Join(lines, " \\\n  ")
}

// codeSpans escapes s for HTML and sets its `backquoted` parts as code.
func codeSpans(s string) template.HTML {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`")
		}
		b.WriteString(template.HTMLEscapeString(p))
	}
	return template.HTML(b.String())
}

func prettyJSON(v any) string {
	if v == nil {
		return ""
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return strconv.Quote(fmt.Sprint(v))
	}
	return strings.TrimSpace(buf.String())
}

// schemasPage is the schema view of the docs: every component schema of
// the document with its own fields.
type schemasPage struct {
	Title, Version string
	Schemas        []docsSchema
}

type docsSchema struct {
	Name, Description, Type, Rule string
	Fields                        []docsField
	UsedBy                        []docsLink
}

type docsLink struct{ Href, Text string }

// renderSchemas renders the schema view from the document: the schemas
// in name order, a field that refers to another schema linked to it, and
// each schema's operations (those whose body or answer it is).
func renderSchemas(doc *openAPIDoc, routes []Route) []byte {
	all := doc.Components.Schemas
	used := make(map[string][]docsLink)
	for _, rt := range routes {
		link := docsLink{Href: "/api/docs#" + rt.Doc.ID, Text: rt.Method + " " + openAPIPath(rt.Path)}
		seen := map[string]bool{}
		for _, name := range append([]string{rt.Doc.Body}, answerSchemas(rt)...) {
			if name != "" && !seen[name] {
				seen[name] = true
				used[name] = append(used[name], link)
			}
		}
	}
	page := schemasPage{Title: doc.Info.Title, Version: doc.Info.Version}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		s := all[name]
		ds := docsSchema{Name: name, Type: typeOf(s), Rule: constraints(s), UsedBy: used[name]}
		if d, ok := s["description"].(string); ok {
			ds.Description = d
		}
		eachField(all, s, func(f docsField, ps Schema) {
			if _, f.Ref = resolve(all, ps); f.Ref == "" {
				if items, ok := ps["items"].(Schema); ok {
					if _, ref := resolve(all, items); ref != "" {
						f.Type = ref + "[]"
					}
				}
			}
			ds.Fields = append(ds.Fields, f)
		})
		page.Schemas = append(page.Schemas, ds)
	}
	var buf bytes.Buffer
	if err := docsTemplates("schemas", schemasTemplate).Execute(&buf, page); err != nil {
		panic(fmt.Sprintf("transport: the schema page does not render: %v", err)) // a programming error
	}
	return buf.Bytes()
}

// answerSchemas lists the schemas of a route's answers.
func answerSchemas(rt Route) []string {
	var out []string
	for _, a := range rt.Doc.Answers {
		out = append(out, a.Schema)
	}
	return out
}

// serveSchemas answers the schema view of the docs, under the docs
// page's Content-Security-Policy.
func (s *Server) serveSchemas(w http.ResponseWriter, req bunrouter.Request) error {
	return s.writeDocsPage(w, s.schemasHTML)
}
