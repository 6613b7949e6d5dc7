// Package httpcall is the one HTTP client policy of every provider:
// timeouts, a User-Agent naming Herald, a cap on answer sizes, and the
// classification of transport failures into the engine's outcomes.
package httpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/push"
)

// UserAgent names Herald in every outgoing request.
const UserAgent = "Herald/1 (+https://github.com/heraldpush/herald)"

// maxAnswer caps how much of a platform's answer is read.
const maxAnswer = 4 << 20

// Options configure a Client.
type Options struct {
	// Transport carries the requests (default: a clone of
	// http.DefaultTransport with bounded dial and TLS handshake times).
	Transport http.RoundTripper
	// Timeout caps one whole call, answer included (default 30 s); the
	// engine's per-attempt context may end it sooner.
	Timeout time.Duration
}

// Client sends platform API calls.
type Client struct {
	hc *http.Client
}

// New returns a Client.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSHandshakeTimeout = 10 * time.Second
		t.ResponseHeaderTimeout = opts.Timeout
		// Many workers call one platform host at once: connections they
		// return together must stay open for the next calls, not be
		// closed and dialed again.
		t.MaxIdleConns = 1024
		t.MaxIdleConnsPerHost = 256
		opts.Transport = t
	}
	return &Client{hc: &http.Client{Transport: opts.Transport, Timeout: opts.Timeout}}
}

// Timeout returns the time cap of one call.
func (c *Client) Timeout() time.Duration { return c.hc.Timeout }

// Transport returns the transport calls go through (nil: Go's default),
// for a provider that opens a connection of its own (a WebSocket).
func (c *Client) Transport() http.RoundTripper { return c.hc.Transport }

// Response is a platform's answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req and reads the answer. A failure is a *push.SendError:
// Retryable when the request was not completely written (nothing can have
// been processed: DNS failure, connection refused, TLS failure), Uncertain
// when it was (timeout or reset while waiting for or reading the answer).
// The error text never contains the request URL, which may hold a
// credential.
func (c *Client) Do(ctx context.Context, req *http.Request) (*Response, error) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	req.Header.Set("User-Agent", UserAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		cause := scrub(err)
		if !wrote.Load() {
			return nil, &push.SendError{Outcome: push.OutcomeRetryable, Message: "the request was not sent: " + cause.Error(), Err: cause}
		}
		return nil, &push.SendError{Outcome: push.OutcomeUncertain, Message: "no answer after the request was sent: " + cause.Error(), Err: cause}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		cause := scrub(err)
		return nil, &push.SendError{Outcome: push.OutcomeUncertain, Message: fmt.Sprintf("the answer (HTTP %d) broke off: %v", resp.StatusCode, cause), Err: cause}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// PostJSON sends v as a JSON body to url with the extra headers.
func (c *Client) PostJSON(ctx context.Context, url string, v any, header http.Header) (*Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, push.DefinitiveError("", "encode request: %v", err)
	}
	return c.PostJSONBody(ctx, url, body, header)
}

// MarshalUnescaped encodes v as JSON with <, > and & written as
// themselves rather than as \u003c, \u003e and \u0026, for platforms
// that count or show the bytes (no trailing newline).
func MarshalUnescaped(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// PostJSONBody sends body, already encoded JSON, to url with the extra
// headers.
func (c *Client) PostJSONBody(ctx context.Context, url string, body []byte, header http.Header) (*Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, push.DefinitiveError("", "build request: %v", scrub(err))
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	return c.Do(ctx, req)
}

// scrub removes the URL from *url.Error, whose text would otherwise carry
// credentials that some platforms put in the path or query.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		if ue.Timeout() {
			return fmt.Errorf("timed out: %w", ue.Err)
		}
		return ue.Err
	}
	return err
}

// Unreadable classifies a 2xx answer whose body cannot be understood: the
// platform accepted something, so delivery is uncertain.
func Unreadable(r *Response, err error) *push.SendError {
	return &push.SendError{Outcome: push.OutcomeUncertain, Message: fmt.Sprintf("the answer (HTTP %d) could not be read: %v", r.Status, err), Err: err}
}

// GatewayFailure classifies a 5xx answer that is not the platform's own
// error body: a proxy or gateway failed, and the platform may have
// processed the request.
func GatewayFailure(r *Response) *push.SendError {
	return &push.SendError{Outcome: push.OutcomeUncertain, Message: fmt.Sprintf("HTTP %d from the platform or a gateway in front of it", r.Status)}
}

// Origin names the platform whose answer Foreign and DecodeOwn classify,
// with what that platform says differently from the others.
type Origin struct {
	Platform string // as in its errors: "pushplus"
	Name     string // as in prose: "PushPlus"
	// Hint, when not "", follows a refusal: what to check, e.g. "check
	// api_base".
	Hint string
	// Wait, when not 0, is the wait after a 429 in place of the
	// Retry-After header, for a platform that gives its own.
	Wait time.Duration
}

// Foreign classifies an answer whose body is not the platform's own (a
// proxy's error page, an empty or cut body) by its status: a 2xx is
// Unreadable (why says what could not be read), 429 Retryable after the
// Retry-After header (or o.Wait), 5xx a GatewayFailure, and any other
// status a definitive refusal.
func Foreign(r *Response, why error, o Origin) *push.SendError {
	switch {
	case r.Status >= 200 && r.Status < 300:
		return Unreadable(r, why)
	case r.Status == http.StatusTooManyRequests:
		wait := o.Wait
		if wait == 0 {
			wait = RetryAfter(r.Header)
		}
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: "429", Message: "too many requests", RetryAfter: wait}
	case r.Status >= 500:
		return GatewayFailure(r)
	}
	msg := fmt.Sprintf("%s answered HTTP %d with a body that is not %s's", o.Platform, r.Status, o.Name)
	if o.Hint != "" {
		msg += ": " + o.Hint
	}
	return push.DefinitiveError(strconv.Itoa(r.Status), "%s", msg)
}
