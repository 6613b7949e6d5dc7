package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/heraldpush/herald/transport"
)

// Contract checks answers against the server's OpenAPI document with
// kin-openapi: the status must be documented for the operation, documented
// headers must be present when required and match their schemas, the
// headers Herald sets conditionally must be documented where they appear,
// and the body must match the documented schema of its content type.
type Contract struct {
	Doc    *openapi3.T
	router routers.Router
}

// LoadContract loads an OpenAPI document and prepares a router over it.
// Validate checks the document itself.
func LoadContract(data []byte) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	return &Contract{Doc: doc, router: router}, nil
}

// Validate checks that the document is a valid OpenAPI document and that
// every example in it matches its schema.
func (c *Contract) Validate(ctx context.Context) error {
	if !c.Doc.IsOpenAPI31OrLater() {
		return fmt.Errorf("the document is OpenAPI %s, not 3.1", c.Doc.OpenAPI)
	}
	if err := c.Doc.Validate(ctx, openapi3.EnableExamplesValidation()); err != nil {
		return fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	return nil
}

// conditionalHeaders are headers Herald sets on some answers only; where
// one appears, the document must list it for that answer.
func conditionalHeaders() []string {
	return []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "Idempotency-Replay"}
}

// Check validates one answer to req. A request no documented operation
// matches (an unknown path, a method a path does not take) must be
// answered with the documented error body and 404 or 405; under
// /api/openapi/, where the key is checked before the method, a wrong
// method may be answered 401.
func (c *Contract) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return c.checkUnrouted(req, status, body, err)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return err
	}
	resp := route.Operation.Responses.Status(status)
	var missing []string
	for _, h := range conditionalHeaders() {
		if header.Get(h) != "" && (resp == nil || resp.Value == nil || resp.Value.Headers[h] == nil) {
			missing = append(missing, h)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the answer carries %s, which the document does not list for %s %s %d", strings.Join(missing, ", "), req.Method, route.Path, status)
	}
	return nil
}

func (c *Contract) checkUnrouted(req *http.Request, status int, body []byte, routeErr error) error {
	allowed := map[int]bool{404: true}
	if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
		// Under /api/openapi/ and /api/manage/v1/ the caller is checked
		// before the method.
		allowed = map[int]bool{405: true, 401: strings.HasPrefix(req.URL.Path, transport.BasePath+"/openapi/") ||
			strings.HasPrefix(req.URL.Path, transport.BasePath+"/manage/v1/")}
	}
	if strings.ContainsFunc(req.URL.Path, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		allowed[400] = true // invalid_path, before any route is looked up
	}
	if !allowed[status] {
		return fmt.Errorf("%s %s matches no documented operation (%w) but was answered %d", req.Method, req.URL.Path, routeErr, status)
	}
	ref := c.Doc.Components.Schemas["Error"]
	if ref == nil || ref.Value == nil {
		return errors.New("the document has no Error schema")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s %s answered %d with a body that is not JSON: %w", req.Method, req.URL.Path, status, err)
	}
	if err := ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("%s %s answered %d with a body that is not the Error schema: %w", req.Method, req.URL.Path, status, err)
	}
	return nil
}
