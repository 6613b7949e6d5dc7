package transport_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
)

// rawRequest writes request to the server as is and reads the answer.
func rawRequest(t *testing.T, root, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(root, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// TestEveryAnswerIsTheEnvelope sends requests that the router or net/http
// answered by themselves (a redirect without a body, a plain-text error):
// each answer is the JSON error envelope, and names the path as sent.
func TestEveryAnswerIsTheEnvelope(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	auth := "Authorization: Bearer " + f.Key + "\r\n"
	body := `{"botId":1,"target":"1","content":"x"}`
	post := func(path, extra string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: x\r\n" + auth + extra + "Content-Type: application/json\r\nContent-Length: " +
			itoa(int64(len(body))) + "\r\n\r\n" + body
	}
	get := func(path, extra string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + auth + extra + "\r\n"
	}
	tests := []struct {
		name, request string
		status        int
		reason        string
		says          []string
	}{
		{"trailing slash", post("/api/openapi/v1/push/private/", ""), 404, "route_not_found", []string{"/api/openapi/v1/push/private/", "did you mean /api/openapi/v1/push/private?"}},
		{"trailing slash on a GET", get("/api/openapi/queue-request/?key=k", ""), 404, "route_not_found", []string{"/api/openapi/queue-request/", "did you mean /api/openapi/queue-request?"}},
		{"dot-dot segment", post("/api/openapi/v1/push/../push/private", ""), 404, "route_not_found", []string{"/api/openapi/v1/push/../push/private", "did you mean /api/openapi/v1/push/private?"}},
		{"dot segment", get("/api/./openapi/queue-request?key=k", ""), 404, "route_not_found", []string{"/api/./openapi/queue-request"}},
		{"double slash", get("/api//openapi/queue-request?key=k", ""), 404, "route_not_found", []string{"/api//openapi/queue-request"}},
		{"trailing slash on the docs", get("/api/docs/", ""), 404, "route_not_found", []string{"did you mean /api/docs?"}},
		{"percent-escapes named as sent", get("/api/openapi/n%6Fpe%2Fx", ""), 404, "route_not_found", []string{"/api/openapi/n%6Fpe%2Fx"}},
		{"percent-escapes on a wrong method", "DELETE /api/openapi/%73end HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 404, "route_not_found", []string{"/api/openapi/%73end"}},
		{"header over the handler's limit", get("/api/openapi/queue-request?key=k", "X-Big: "+strings.Repeat("a", 70<<10)+"\r\n"), 431, "header_too_large", []string{"header", "limit is 65536"}},
		{"header over net/http's limit", get("/api/openapi/queue-request?key=k", "X-Big: "+strings.Repeat("a", 1<<20+8<<10)+"\r\n"), 431, "header_too_large", []string{"header is too large"}},
		{"header line without a colon", get("/api/openapi/queue-request?key=k", "Authorization Bearer hrd_secret\r\n"), 400, "invalid_request", []string{"header line"}},
		{"space before the colon", get("/api/openapi/queue-request?key=k", "X-A : b\r\n"), 400, "invalid_header", []string{"header is malformed"}},
		{"no Host header", "GET /api/openapi/queue-request?key=k HTTP/1.1\r\n" + auth + "\r\n", 400, "invalid_header", []string{"Host"}},
		{"unsupported transfer encoding", "POST /api/openapi/send HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "unsupported_transfer_encoding", []string{"Transfer-Encoding"}},
		{"malformed request line", "GET\r\nHost: x\r\n\r\n", 400, "invalid_request", []string{"malformed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, data := rawRequest(t, h.Root, tt.request)
			var e errAnswer
			if err := json.Unmarshal(data, &e); err != nil {
				t.Fatalf("answer %d %q is not JSON: %v", resp.StatusCode, data, err)
			}
			if resp.StatusCode != tt.status || e.Code != tt.status || e.Error != tt.reason {
				t.Fatalf("got %d %s; want %d %s", resp.StatusCode, data, tt.status, tt.reason)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			for _, s := range tt.says {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q lacks %q", e.Message, s)
				}
			}
			if strings.Contains(string(data), "hrd_secret") {
				t.Errorf("the answer repeats a header's value: %s", data)
			}
		})
	}
	// The document lists 431 where the handler answers it.
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "x"},
		"X-Big", strings.Repeat("a", 70<<10))
	if r.Status != 431 {
		t.Fatalf("a send with a 70 KiB header: %d %s", r.Status, r.Body)
	}
	if h.CountJobs(t) != 0 || h.Telegram.Requests() != 0 {
		t.Fatal("a refused request queued or sent a message")
	}
}
