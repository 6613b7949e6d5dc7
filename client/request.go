package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// request is one call of the API, however many times it is sent.
type request struct {
	method string
	path   string // below the base URL, e.g. /openapi/v1/push/private
	query  url.Values
	body   []byte // the JSON body, the same bytes on every attempt; nil for none
	// key is the Idempotency-Key of a send: the same on every attempt.
	key string
	// unsafe requests change something on the server: a transport error
	// after one was written is an unknown result, never retried.
	unsafe bool
}

// envelope is the body of every answer: {code, message, data} and, on a
// refusal, the reason in error.
type envelope struct {
	Code    *int            `json:"code"`
	Message string          `json:"message"`
	Error   string          `json:"error"`
	Data    json.RawMessage `json:"data"`
}

// answer is the server's answer to a request.
type answer struct {
	status int
	header http.Header
	env    envelope
	// herald says the body is Herald's envelope (a JSON object with code).
	herald bool
}

// hasData reports whether the answer carries a non-null data.
func (a answer) hasData() bool {
	d := bytes.TrimSpace(a.env.Data)
	return len(d) > 0 && !bytes.Equal(d, []byte("null"))
}

// decode reads the answer's data into v.
func (a answer) decode(v any) error {
	if !a.hasData() {
		return fmt.Errorf("herald: %d answer without data: %w", a.status, errNoBody)
	}
	if err := json.Unmarshal(a.env.Data, v); err != nil {
		return fmt.Errorf("herald: read the %d answer's data: %w", a.status, err)
	}
	return nil
}

// err returns the answer as an *Error.
func (a answer) err() *Error {
	e := &Error{Status: a.status, Reason: Reason(a.env.Error), Message: a.env.Message,
		RetryAfter: retryAfter(a.header.Get("Retry-After"), time.Now()), RequestID: a.header.Get("X-Request-Id")}
	if !a.herald {
		e.Reason, e.Message = "", ""
		if loc := a.header.Get("Location"); a.status >= 300 && a.status < 400 && loc != "" {
			e.Message = "the server redirects to " + loc + ": give the client the base URL it redirects to"
		}
	}
	return e
}

// do sends a request, retrying where it is safe (see retryPolicy), and
// returns the last answer read. Its error is a transport or context error
// (wrapped in an UnknownResultError when an unsafe request may have
// reached the server); an answer of any status is returned as an answer.
func (c *Client) do(ctx context.Context, r request) (answer, error) {
	for attempt := 1; ; attempt++ {
		a, written, err := c.once(ctx, r)
		var wait time.Duration
		switch {
		case err != nil && ctx.Err() != nil:
			if written && r.unsafe {
				return answer{}, &UnknownResultError{Key: r.key, Err: ctx.Err()}
			}
			return answer{}, fmt.Errorf("herald: %s %s: %w", r.method, r.path, ctx.Err())
		case err != nil && written && r.unsafe:
			// The request may have arrived: sending it again under the
			// same key would be harmless, but the contract says to ask
			// rather than resend (rule 7), and so does the caller's code.
			return answer{}, &UnknownResultError{Key: r.key, Err: err}
		case err != nil:
			// Nothing reached the server (a dial error), or the request
			// only reads.
			wait = c.retry.backoff(attempt)
			if attempt >= c.retry.attempts {
				return answer{}, &transportError{method: r.method, path: r.path, err: err}
			}
		case a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable:
			// Refused for now, with nothing changed: Herald answers 429
			// and 503 before it writes anything. A 503 of something else
			// (a proxy's) is retried only by the requests that carry a
			// key or only read.
			if !a.herald && r.unsafe && r.key == "" {
				return a, nil
			}
			wait = a.err().RetryAfter
			if wait <= 0 {
				wait = c.retry.backoff(attempt)
			}
			if attempt >= c.retry.attempts || wait > c.retry.maxWait {
				return a, nil
			}
		default:
			return a, nil
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			if err != nil {
				return answer{}, &transportError{method: r.method, path: r.path, err: err}
			}
			return a, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if err != nil {
				return answer{}, &transportError{method: r.method, path: r.path, err: ctx.Err()}
			}
			return a, nil
		case <-t.C:
		}
	}
}

// once sends the request one time. written reports whether any byte of
// it may have reached the server: false only when no connection was had
// (a dial, DNS or TLS handshake error), which proves nothing was sent.
func (c *Client) once(ctx context.Context, r request) (a answer, written bool, err error) {
	var got atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { got.Store(true) }}
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body) // sets GetBody: net/http's own retries send the same bytes
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), r.method, u, body)
	if err != nil {
		return answer{}, false, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	if r.key != "" {
		req.Header.Set("Idempotency-Key", r.key)
	}
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, got.Load(), err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return answer{}, true, fmt.Errorf("read the %d answer: %w", resp.StatusCode, err)
	}
	a = answer{status: resp.StatusCode, header: resp.Header}
	if json.Unmarshal(data, &a.env) == nil && a.env.Code != nil {
		a.herald = true
	}
	return a, true, nil
}

// maxAnswer caps the bytes of an answer the client reads: more than any
// answer of Herald's (a page of 500 jobs).
const maxAnswer = 64 << 20

// transportError is a transport failure of a request that changed
// nothing: it surely did not reach the server (no connection was had), or
// it only reads.
type transportError struct {
	method, path string
	err          error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("herald: %s %s: %v", e.method, e.path, e.err)
}

func (e *transportError) Unwrap() error { return e.err }

// retryPolicy says how often and how long a call retries.
type retryPolicy struct {
	attempts int
	maxWait  time.Duration
}

// backoff is the pause after a failed attempt n (1-based) that named no
// wait: 100ms doubling, at most 2s.
func (p retryPolicy) backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n-1, 5)
	return min(d, 2*time.Second)
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
