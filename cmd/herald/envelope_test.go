package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeAnswersBadHeadersWithTheEnvelope: herald serve answers what
// net/http refuses by itself (a header over the http.Server's limit, a
// malformed header line) with the API's JSON error envelope, not plain
// text.
func TestServeAnswersBadHeadersWithTheEnvelope(t *testing.T) {
	s := startServed(t, nil, filepath.Join(t.TempDir(), "h.db"))
	addr := strings.TrimSuffix(strings.TrimPrefix(s.p.URL, "http://"), "/api")
	tests := []struct {
		name, header string
		status       int
		reason       string
	}{
		{"a header over the server's limit", "X-Big: " + strings.Repeat("a", 300<<10), 431, "header_too_large"},
		{"a header over the handler's limit", "X-Big: " + strings.Repeat("a", 70<<10), 431, "header_too_large"},
		{"a header line without a colon", "Authorization Bearer hrd_x", 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = io.WriteString(conn, "GET /api/openapi/queue-request?key=k HTTP/1.1\r\nHost: x\r\n"+tt.header+"\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Error   string `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("%d %s: the body is not JSON: %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
			}
			if resp.StatusCode != tt.status || e.Code != tt.status || e.Error != tt.reason || e.Message == "" {
				t.Fatalf("got %d %+v; want %d %s", resp.StatusCode, e, tt.status, tt.reason)
			}
		})
	}
}
