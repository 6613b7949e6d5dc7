package transport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/uptrace/bunrouter"
)

//go:embed docs.html
var docsTemplate string

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
}

type docsAnswer struct {
	Status  int
	Text    string
	Example string
}

// renderDocs renders the docs page from the document.
func (s *Server) renderDocs(doc *openAPIDoc, routes []Route) []byte {
	tmpl := template.Must(template.New("docs").Funcs(template.FuncMap{
		"lower": strings.ToLower,
		"code":  codeSpans,
	}).Parse(docsTemplate))
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
				op.Answers = append(op.Answers, docsAnswer{Status: a.Status, Text: a.Description, Example: prettyJSON(a.Example)})
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
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.docsHTML)
	return err
}

// fieldsOf lists an object schema's fields in their documented order,
// nested objects of arrays as name[].field.
func fieldsOf(all map[string]Schema, s Schema, prefix string) []docsField {
	if r, ok := s["$ref"].(string); ok {
		s = all[strings.TrimPrefix(r, "#/components/schemas/")]
	}
	props, _ := s["properties"].(map[string]any)
	order, _ := s["x-order"].([]string)
	required := map[string]bool{}
	if rs, ok := s["required"].([]string); ok {
		for _, r := range rs {
			required[r] = true
		}
	}
	var out []docsField
	for _, name := range order {
		ps := props[name].(Schema)
		out = append(out, docsField{Name: prefix + name, In: "body", Type: typeOf(ps), Required: required[name],
			Rule: strings.TrimSpace(fmt.Sprint(ps["description"])) + constraints(ps)})
		if items, ok := ps["items"].(Schema); ok && items["type"] == "object" {
			out = append(out, fieldsOf(all, items, prefix+name+"[].")...)
		}
	}
	return out
}

// typeOf names a schema's type for the docs: integer, string[], …
func typeOf(s Schema) string {
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
