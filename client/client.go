package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to one Herald server. It is safe for concurrent use; make
// one and share it.
type Client struct {
	base    string // the API's base URL, ending in /api
	auth    func(*http.Request)
	http    *http.Client
	retry   retryPolicy
	pollMin time.Duration
	pollMax time.Duration
	agent   string
}

// Options configure a Client. The zero value of each field is its
// default.
type Options struct {
	// APIKey is the account's API key, sent as "Authorization: Bearer".
	// It acts for its account only.
	APIKey string
	// Session is a session token from SessionService.SignIn, sent as the
	// session cookie, for the management API on behalf of a person. An
	// APIKey, when both are given, wins.
	Session string
	// HTTPClient makes the requests (default: a client of its own, with
	// no overall timeout: give each call a context with a deadline).
	HTTPClient *http.Client
	// MaxAttempts caps the requests one call makes, the first included,
	// when it retries (default 4; 1 turns retries off).
	MaxAttempts int
	// MaxRetryWait is the longest wait before a retry that the client
	// accepts: a 429 or a 503 asking to wait longer (Retry-After) is
	// returned to the caller instead (default 30s).
	MaxRetryWait time.Duration
	// PollInterval is Wait's first pause between two queries of a job; it
	// doubles up to PollMax (defaults 250ms and 5s).
	PollInterval time.Duration
	// PollMax is the longest pause of Wait between two queries.
	PollMax time.Duration
	// UserAgent is sent with every request (default "herald-go-client").
	UserAgent string
}

// New returns a client of the server whose API is at baseURL: the
// contract's {base_url}, which ends in /api, such as
// "https://push.example.com/api". A URL without a path gets /api.
func New(baseURL string, o Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("herald: the base URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("herald: the base URL %q is not an http or https URL with a host, such as https://push.example.com/api", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("herald: the base URL %q has a query or a fragment: give the API's base URL alone", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = "/api"
	}
	u.RawPath = ""
	c := &Client{
		base:    u.String(),
		http:    o.HTTPClient,
		retry:   retryPolicy{attempts: o.MaxAttempts, maxWait: o.MaxRetryWait},
		pollMin: o.PollInterval,
		pollMax: o.PollMax,
		agent:   o.UserAgent,
	}
	switch {
	case o.APIKey != "":
		key := o.APIKey
		c.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
	case o.Session != "":
		ck := (&http.Cookie{Name: sessionCookie, Value: o.Session}).String()
		c.auth = func(r *http.Request) { r.Header.Set("Cookie", ck) }
	default:
		c.auth = func(*http.Request) {}
	}
	if c.http == nil {
		c.http = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), CheckRedirect: keepMethod}
	}
	if c.retry.attempts <= 0 {
		c.retry.attempts = 4
	}
	if c.retry.maxWait <= 0 {
		c.retry.maxWait = 30 * time.Second
	}
	if c.pollMin <= 0 {
		c.pollMin = 250 * time.Millisecond
	}
	if c.pollMax <= 0 {
		c.pollMax = 5 * time.Second
	}
	if c.pollMax < c.pollMin {
		c.pollMax = c.pollMin
	}
	if c.agent == "" {
		c.agent = "herald-go-client"
	}
	return c, nil
}

// BaseURL returns the API's base URL the client sends to, ending in /api.
func (c *Client) BaseURL() string { return c.base }

// Close closes the idle connections of the client's HTTP client.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// keepMethod follows a redirect only when it keeps the request's method
// and body (307 and 308): a 301, 302 or 303 would turn a send into a GET.
// The redirect is answered to the caller instead (a refusal naming where
// it points). Herald itself never redirects.
func keepMethod(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 || req.Method != via[0].Method {
		return http.ErrUseLastResponse
	}
	return nil
}

// sessionCookie is the name of the cookie that holds a session's token.
const sessionCookie = "herald_session"

// errNoBody is the cause of an error about an answer that lacked the
// body the contract gives it.
var errNoBody = errors.New("the answer has no JSON body of Herald's")

// errNoSessionCookie is the error of a sign-in answered without the
// session cookie.
var errNoSessionCookie = errors.New("herald: the sign-in was answered without a session cookie")
