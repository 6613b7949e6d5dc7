package transport

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// EnvelopeListener wraps ln so that the answers net/http writes by itself,
// before any handler runs, are the JSON error envelope like every other
// answer of the API: a request header over the server's MaxHeaderBytes
// (431), a malformed request line or header (400), an unsupported
// transfer encoding (501). net/http writes each of them to the connection
// in one write, with its own fixed headers, and closes the connection;
// the wrapper recognizes that write and replaces it.
//
// Wrap a plain TCP listener only: net/http serves TLS (and HTTP/2) only
// on a *tls.Conn, which a wrapped connection is not. Over TLS the
// handler's own header limit (Options.MaxHeaderBytes) still answers an
// over-long header with the envelope, up to the http.Server's limit.
func EnvelopeListener(ln net.Listener) net.Listener { return envelopeListener{ln} }

type envelopeListener struct{ net.Listener }

func (l envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return envelopeConn{c}, nil
}

type envelopeConn struct{ net.Conn }

// netHTTPErrorHeaders are the headers net/http gives its own error
// answers, in this order. The answers of handlers are written with their
// header names sorted (Connection before Content-Type), so no handler's
// answer starts this way.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c envelopeConn) Write(b []byte) (int, error) {
	if out, ok := rewriteNetHTTPError(b); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// rewriteNetHTTPError turns one of net/http's own error answers into the
// error envelope. It does not repeat the text net/http gives: for a
// malformed header line, that is the line itself, which may hold a key.
func rewriteNetHTTPError(b []byte) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte("HTTP/1.")) || len(b) < 12 {
		return nil, false
	}
	line, _, ok := bytes.Cut(b, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(b[len(line):], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil || status < 400 {
		return nil, false
	}
	text := string(line[12:])
	var reason, msg string
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		reason, msg = "header_too_large", "the request's header is too large: send shorter headers (a Cookie or an Authorization header is the usual suspect)"
	case status == http.StatusNotImplemented:
		reason, msg = "unsupported_transfer_encoding", "the request's Transfer-Encoding is not supported: send the body with a Content-Length or chunked"
	case strings.Contains(text, "Host header"):
		reason, msg = "invalid_header", "the request's Host header is missing or malformed: send one Host header with the server's name"
	case strings.Contains(text, "protocol"):
		reason, msg = "invalid_request", "the request's HTTP version is not supported: send HTTP/1.1"
	case strings.Contains(text, "MIME header") || strings.Contains(text, "header"):
		reason, msg = "invalid_header", "a request header is malformed (a line without a colon, a space before the colon, or a character a header may not hold): check the request's headers"
	default:
		// net/http says no more than "Bad Request" of a malformed request
		// line and of a header line without a colon.
		reason, msg = "invalid_request", "the request is malformed: its request line or a header line is not HTTP/1.1 (a header line without a colon, say): check the request"
	}
	body, _ := json.Marshal(errorBody{Code: status, Message: msg, Error: reason})
	body = append(body, '\n')
	var rid [8]byte
	_, _ = rand.Read(rid[:])
	var out bytes.Buffer
	out.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	out.WriteString("Cache-Control: no-store\r\nConnection: close\r\n")
	out.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	out.WriteString("Content-Type: application/json; charset=utf-8\r\n")
	out.WriteString("X-Request-Id: " + hex.EncodeToString(rid[:]) + "\r\n\r\n")
	out.Write(body)
	return out.Bytes(), true
}
