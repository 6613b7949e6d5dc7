package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// The management API (/api/manage/v1): what an account owns and, for
// operators, the service. Each resource is a service of the client with
// the same verbs — List (a Page, newest first), Get, Create, Update,
// Delete and the resource's own — and every refusal is an *Error. An API
// key manages its own account; a session (Options.Session) acts for its
// person.

// managePrefix is where the management API lives, below the base URL.
const managePrefix = "/manage/v1"

// Page is one page of a list, newest first.
type Page[T any] struct {
	// Items are the page's items.
	Items []T `json:"items"`
	// Next is the cursor of the next page (the Cursor of the next
	// List); empty on the last page.
	Next string `json:"next"`
}

// ListOptions choose a page of a list.
type ListOptions struct {
	// Limit is the page's size: 1 to 500 (0: the server's default, 50).
	Limit int
	// Cursor is the Next of the page before; empty for the first page.
	Cursor string
}

// query returns the list options as query parameters, beside q's.
func (o ListOptions) query(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// setID sets an optional id parameter (0: none).
func setID(q url.Values, name string, id int64) {
	if id != 0 {
		q.Set(name, strconv.FormatInt(id, 10))
	}
}

// idPath is a management path with an object's id: /manage/v1/bots/7.
func idPath(resource string, id int64, rest ...string) string {
	p := managePrefix + "/" + resource + "/" + strconv.FormatInt(id, 10)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// get reads one object of the management API into out.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.call(ctx, request{method: http.MethodGet, path: path, query: q}, out)
}

// change makes a change of the management API with a JSON body (nil for
// none) and reads the answer's data into out (nil: ignored).
func (c *Client) change(ctx context.Context, method, path string, body, out any) error {
	r := request{method: method, path: path, unsafe: true}
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("herald: encode the request: %w", err)
		}
		r.body = data
	}
	return c.call(ctx, r, out)
}

// read reads one object of the management API.
func read[T any](ctx context.Context, c *Client, path string, q url.Values) (T, error) {
	var v T
	err := c.get(ctx, path, q, &v)
	return v, err
}

// write makes a change of the management API (see change) and returns
// the answer's data.
func write[T any](ctx context.Context, c *Client, method, path string, body any) (T, error) {
	var v T
	err := c.change(ctx, method, path, body, &v)
	return v, err
}

// list reads a page of a list.
func list[T any](ctx context.Context, c *Client, path string, q url.Values, o ListOptions) (Page[T], error) {
	return read[Page[T]](ctx, c, path, o.query(q))
}

// canceled is the answer of a delete or an unbind.
type canceled struct {
	Canceled int `json:"canceled"`
}

// mustJSON encodes a value that always encodes (a map of strings).
func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic("herald: " + err.Error())
	}
	return data
}
