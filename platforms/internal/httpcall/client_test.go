package httpcall

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

func TestDoClassifiesTransportFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, "/drop"):
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case strings.HasPrefix(p, "/slow"):
			time.Sleep(300 * time.Millisecond)
		case strings.HasPrefix(p, "/cut"):
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte("partial"))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case p == "/ua":
			_, _ = w.Write([]byte(r.Header.Get("User-Agent")))
		}
	}))
	defer srv.Close()
	// A port nothing listens on: take one and close it.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()

	c := New(Options{Timeout: 150 * time.Millisecond})
	secret := "/botSECRET123/send?token=SECRET456"
	tests := []struct {
		name string
		url  string
		want push.Outcome
	}{
		{"connection refused: nothing sent", closed + secret, push.OutcomeRetryable},
		{"connection closed after the request was read", srv.URL + "/drop" + secret, push.OutcomeUncertain},
		{"timeout after the request was written", srv.URL + "/slow" + secret, push.OutcomeUncertain},
		{"answer broke off", srv.URL + "/cut" + secret, push.OutcomeUncertain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.PostJSON(context.Background(), tt.url, map[string]string{"a": "b"}, nil)
			var se *push.SendError
			if !errors.As(err, &se) || se.Outcome != tt.want {
				t.Fatalf("error %v, want outcome %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error leaks the URL: %v", err)
			}
		})
	}
	r, err := c.PostJSON(context.Background(), srv.URL+"/ua", nil, nil)
	if err != nil || string(r.Body) != UserAgent {
		t.Fatalf("User-Agent sent: %q, %v", r.Body, err)
	}
	// A canceled context before sending is retryable: nothing left.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.PostJSON(ctx, srv.URL+"/ua", nil, nil)
	var se *push.SendError
	if !errors.As(err, &se) || se.Outcome != push.OutcomeRetryable {
		t.Fatalf("canceled before sending: %v", err)
	}
}

func TestForeign(t *testing.T) {
	why := errors.New("no code in the answer")
	plain := Origin{Platform: "pushplus", Name: "PushPlus"}
	own := Origin{Platform: "wecom", Name: "WeCom", Hint: "check api_base", Wait: 5 * time.Second}
	tests := []struct {
		name   string
		o      Origin
		resp   Response
		want   push.Outcome
		code   string
		errHas string
		after  time.Duration
	}{
		{"a 2xx is unreadable: it may have been sent", plain, Response{Status: 200}, push.OutcomeUncertain, "", "could not be read: no code in the answer", 0},
		{"429 waits for Retry-After", plain, Response{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, push.OutcomeRetryable, "429", "too many requests", 7 * time.Second},
		{"a platform's own 429 wait replaces Retry-After", own, Response{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, push.OutcomeRetryable, "429", "too many requests", 5 * time.Second},
		{"5xx is a gateway's failure", plain, Response{Status: 502}, push.OutcomeUncertain, "", "HTTP 502 from the platform or a gateway", 0},
		{"another status is a refusal", plain, Response{Status: 404}, push.OutcomeDefinitive, "404", "pushplus answered HTTP 404 with a body that is not PushPlus's", 0},
		{"a refusal ends with the platform's hint", own, Response{Status: 404}, push.OutcomeDefinitive, "404", "wecom answered HTTP 404 with a body that is not WeCom's: check api_base", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se := Foreign(&tt.resp, why, tt.o)
			if se.Outcome != tt.want || se.Code != tt.code || se.RetryAfter != tt.after || !strings.Contains(se.Message, tt.errHas) {
				t.Fatalf("%+v, want %s code %q after %s with %q", se, tt.want, tt.code, tt.after, tt.errHas)
			}
		})
	}
}
