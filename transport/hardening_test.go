package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

func TestDeepJSONIsRefusedBeforeTheEnd(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	defer func() {
		// One send (the brackets in a string) went through; nothing else.
		if h.CountJobs(t) != 1 || h.Balance(t, f.Account.ID) != 99 || len(h.Telegram.Messages()) != 1 {
			t.Errorf("after the deep bodies: %d jobs, balance %d, %d messages; want 1, 99, 1", h.CountJobs(t), h.Balance(t, f.Account.ID), len(h.Telegram.Messages()))
		}
	}()
	deep := strings.Repeat("[", 17)
	r := h.Call(t, "POST", "/openapi/v1/push/private", f.Key, `{"botId":1,"x":`+deep+strings.Repeat("]", 17)+`}`)
	var e errAnswer
	r.Decode(t, &e)
	if r.Status != 400 || !strings.Contains(e.Message, "more than 16 levels") {
		t.Fatalf("deep body: %d %s", r.Status, r.Body)
	}
	// Brackets inside strings do not count.
	r = h.Call(t, "POST", "/openapi/v1/push/private", f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": deep + `"\"[[`})
	if r.Status != 200 {
		t.Fatalf("brackets in a string: %d %s", r.Status, r.Body)
	}
	// A deep body whose end never arrives is answered anyway: the server
	// stops reading at the 17th level.
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.Root, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prefix := `{"botId":1,"x":` + deep
	_, _ = conn.Write([]byte("POST /api/openapi/v1/push/private HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + f.Key +
		"\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n" + prefix))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, " 400 ") {
		t.Fatalf("a deep body whose end never arrives: %q, %v", status, err)
	}
}

func TestServerTimeouts(t *testing.T) {
	h := testkit.New(t)
	srv := transport.NewHTTPServer("127.0.0.1:0", http.NotFoundHandler(), time.Second)
	srv.ReadHeaderTimeout = 200 * time.Millisecond
	srv.ReadTimeout = 400 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Handler = transport.New(h.Engine, transport.Options{})
	go srv.Serve(ln)
	defer srv.Close()

	// Slow headers: the connection is closed when the header timeout passes.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("POST /api/openapi/send HTTP/1.1\r\nHost: x\r\n"))
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("slow headers: err %v after %s; want the connection closed by the server", err, time.Since(start))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("slow headers: the server kept the connection open")
	}

	// Slow body: the server gives up reading and the connection ends.
	conn2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	_, _ = conn2.Write([]byte("POST /api/openapi/send HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nContent-Type: application/json\r\n\r\n{\"bot"))
	_ = conn2.SetReadDeadline(time.Now().Add(3 * time.Second))
	rd := bufio.NewReader(conn2)
	status, _ := rd.ReadString('\n')
	_, err = io.ReadAll(rd)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("slow body: the server kept the connection open (status line %q)", status)
	}
}
