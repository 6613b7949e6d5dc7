package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// header is one request header of the load.
type header struct{ name, value string }

// httpConn is one worker's keep-alive HTTP/1.1 connection to a plain-http
// server. A request is written and its answer read on the worker's own
// goroutine, without net/http's per-request allocations and goroutine
// hand-offs, so that the load generator takes little of the cores it
// shares with the server (as wrk and redis-benchmark do). It speaks only
// what the load needs: POST with a Content-Length body, and answers framed
// by Content-Length, chunked transfer coding or the connection's end.
type httpConn struct {
	addr    string // host:port to dial
	host    string // the Host header
	timeout time.Duration
	conns   *connSet // the load's

	c   net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	req []byte // the request being written, reused
}

// errCut is the error of a request cut by halt.
var errCut = errors.New("the run ended before the answer came")

func (h *httpConn) dial() error {
	c, err := net.DialTimeout("tcp", h.addr, 5*time.Second)
	if err != nil {
		return err
	}
	h.c = c
	if h.r == nil {
		h.r = bufio.NewReaderSize(c, 16<<10)
		h.w = bufio.NewWriterSize(c, 8<<10)
	} else {
		h.r.Reset(c)
		h.w.Reset(c)
	}
	if !h.conns.add(c) {
		h.close()
		return errCut
	}
	return nil
}

func (h *httpConn) close() {
	if h.c != nil {
		h.conns.remove(h.c)
		_ = h.c.Close()
		h.c = nil
	}
}

// post sends one POST and reads the whole answer into out. After an
// error the connection is closed; the next request dials anew.
func (h *httpConn) post(path string, headers []header, body []byte, out *bytes.Buffer) (int, error) {
	if h.c == nil {
		if err := h.dial(); err != nil {
			return 0, err
		}
	}
	status, keep, err := h.exchange(path, headers, body, out)
	if err != nil || !keep {
		h.close()
	}
	return status, err
}

func (h *httpConn) exchange(path string, headers []header, body []byte, out *bytes.Buffer) (status int, keep bool, err error) {
	if h.timeout > 0 {
		if err := h.c.SetDeadline(time.Now().Add(h.timeout)); err != nil {
			return 0, false, err
		}
	}
	if h.conns.isEnded() { // after the deadline: a cut from now on ends the request
		return 0, false, errCut
	}
	b := h.req[:0]
	b = append(b, "POST "...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, h.host...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n"...)
	for _, hd := range headers {
		b = append(b, hd.name...)
		b = append(b, ": "...)
		b = append(b, hd.value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	h.req = b
	if _, err := h.w.Write(b); err != nil {
		return 0, false, err
	}
	if _, err := h.w.Write(body); err != nil {
		return 0, false, err
	}
	if err := h.w.Flush(); err != nil {
		return 0, false, err
	}
	return readAnswer(h.r, out)
}

// readAnswer reads one HTTP/1.1 answer: its status, whether the
// connection stays open, and its body into out.
func readAnswer(r *bufio.Reader, out *bytes.Buffer) (status int, keep bool, err error) {
	out.Reset()
	for {
		line, err := readLine(r)
		if err != nil {
			return 0, false, err
		}
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, false, fmt.Errorf("malformed status line %q", truncateBytes(line))
		}
		status, err = strconv.Atoi(string(line[9:12]))
		if err != nil {
			return 0, false, fmt.Errorf("malformed status line %q", truncateBytes(line))
		}
		h, err := readHeader(r, line[7] == '1')
		if err != nil {
			return 0, false, err
		}
		if status >= 100 && status < 200 {
			continue // an interim answer; the real one follows
		}
		keep = h.keep
		switch {
		case status == 204 || status == 304:
		case h.chunked:
			err = readChunked(r, out)
		case h.length >= 0:
			_, err = io.CopyN(out, r, h.length)
		default:
			_, err = io.Copy(out, r)
			keep = false
		}
		if err != nil {
			return 0, false, err
		}
		return status, keep, nil
	}
}

// head is what the load and the fake platform read of a message's header.
type head struct {
	length      int64 // Content-Length; -1: none
	chunked     bool
	keep        bool // the connection stays open after the message
	contentType string
	expect      bool // Expect: 100-continue
}

// readHeader reads header lines up to the empty line; keep is the
// connection's default (true for HTTP/1.1).
func readHeader(r *bufio.Reader, keep bool) (head, error) {
	h := head{length: -1, keep: keep}
	for {
		line, err := readLine(r)
		if err != nil {
			return h, err
		}
		if len(line) == 0 {
			return h, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return h, fmt.Errorf("malformed header %q", truncateBytes(line))
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if h.length, err = strconv.ParseInt(string(value), 10, 64); err != nil || h.length < 0 {
				return h, fmt.Errorf("malformed Content-Length %q", truncateBytes(value))
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			h.chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				h.keep = false
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				h.keep = true
			}
		case bytes.EqualFold(name, []byte("Content-Type")):
			h.contentType = string(value)
		case bytes.EqualFold(name, []byte("Expect")):
			h.expect = bytes.EqualFold(value, []byte("100-continue"))
		}
	}
}

// readChunked reads a chunked body and its trailer.
func readChunked(r *bufio.Reader, out *bytes.Buffer) error {
	for {
		line, err := readLine(r)
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("malformed chunk size %q", truncateBytes(line))
		}
		if n == 0 {
			for {
				line, err := readLine(r)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if _, err := io.CopyN(out, r, n); err != nil {
			return err
		}
		if line, err := readLine(r); err != nil || len(line) != 0 {
			if err == nil {
				err = errors.New("a chunk does not end with CRLF")
			}
			return err
		}
	}
}

// readLine reads a line without its CRLF; the slice is valid until the
// next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("a header line is too long")
		}
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
	return line, nil
}

func truncateBytes(b []byte) []byte { return b[:min(len(b), 80)] }
