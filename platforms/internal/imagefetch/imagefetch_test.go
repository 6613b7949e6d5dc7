package imagefetch

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

// pngHeader is a valid PNG signature and the start of its first chunk.
const pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func pngBody(n int) []byte {
	return append([]byte(pngHeader), bytes.Repeat([]byte{0}, n)...)
}

func loopbackOnly() []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} }

func outcome(t *testing.T, err error) push.Outcome {
	t.Helper()
	var se *push.SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *push.SendError", err)
	}
	return se.Outcome
}

func TestFetchRefusesNonPublicAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(pngBody(10)) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	strict := New(Options{})
	tests := []struct {
		name, url, says string
	}{
		{"loopback", srv.URL + "/a.png", "loopback"},
		{"localhost by name (checked after DNS)", "http://localhost" + port + "/a.png", "loopback"},
		{"loopback v6", "http://[::1]" + port + "/a.png", "loopback"},
		{"v4-mapped loopback", "http://[::ffff:127.0.0.1]" + port + "/a.png", "loopback"},
		{"private 10/8", "http://10.1.2.3/a.png", "private"},
		{"private 192.168/16", "http://192.168.1.1/a.png", "private"},
		{"private 172.16/12", "http://172.16.0.1/a.png", "private"},
		{"unique local v6", "http://[fd12::1]/a.png", "private"},
		{"link-local", "http://169.254.10.10/a.png", "link-local"},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"unspecified", "http://0.0.0.0" + port + "/a.png", "unspecified"},
		{"shared address space", "http://100.64.0.1/a.png", "reserved"},
		{"file scheme", "file:///etc/passwd", "http or https"},
		{"ftp scheme", "ftp://example.com/a.png", "http or https"},
		{"credentials in url", "http://user:pw@example.com/a.png", "user name or password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := strict.Fetch(context.Background(), tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.says) || outcome(t, err) != push.OutcomeDefinitive {
				t.Fatalf("Fetch(%s) = %v; want a definitive refusal mentioning %q", tt.url, err, tt.says)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Fatalf("error leaks the URL's password: %v", err)
			}
		})
	}
	// The allow-list opens exactly what it names.
	img, err := New(Options{Allow: loopbackOnly()}).Fetch(context.Background(), srv.URL+"/a.png")
	if err != nil || img.ContentType != "image/png" || img.Filename != "image.png" {
		t.Fatalf("allow-listed fetch = %+v, %v", img, err)
	}
}

func TestFetchRechecksRedirects(t *testing.T) {
	var target string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other-loopback":
			http.Redirect(w, r, target, http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/to-image":
			http.Redirect(w, r, "/img", http.StatusFound)
		default:
			_, _ = w.Write(pngBody(10))
		}
	}))
	defer srv.Close()
	// 127.0.0.2 is loopback too, but only 127.0.0.1 is allowed.
	target = strings.Replace(srv.URL, "127.0.0.1", "127.0.0.2", 1) + "/img"
	f := New(Options{Allow: loopbackOnly()})
	for path, says := range map[string]string{
		"/to-other-loopback": "loopback",
		"/to-file":           "http or https",
		"/loop":              "redirects more than",
	} {
		_, err := f.Fetch(context.Background(), srv.URL+path)
		if err == nil || !strings.Contains(err.Error(), says) || outcome(t, err) != push.OutcomeDefinitive {
			t.Errorf("Fetch(%s) = %v; want a definitive refusal mentioning %q", path, err, says)
		}
	}
	if _, err := f.Fetch(context.Background(), srv.URL+"/to-image"); err != nil {
		t.Errorf("a redirect within the allowed host failed: %v", err)
	}
}

func TestFetchCapsAndChecks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", "2064")
			_, _ = w.Write(pngBody(2048))
		case "/big-chunked":
			w.Header().Set("Content-Type", "image/png")
			w.(http.Flusher).Flush() // no Content-Length: the cap applies while reading
			_, _ = w.Write(pngBody(2048))
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>not an image</body></html>"))
		case "/png-as-octets":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(pngBody(10))
		case "/gif":
			_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
		case "/missing":
			http.NotFound(w, r)
		case "/busy":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/slow":
			time.Sleep(500 * time.Millisecond)
			_, _ = w.Write(pngBody(10))
		case "/empty":
		}
	}))
	defer srv.Close()
	f := New(Options{Allow: loopbackOnly(), MaxBytes: 1024, Timeout: 200 * time.Millisecond})
	tests := []struct {
		path    string
		accept  []string
		outcome push.Outcome
		says    string
	}{
		{"/big", nil, push.OutcomeDefinitive, "limit is 1024"},
		{"/big-chunked", nil, push.OutcomeDefinitive, "larger than 1024"},
		{"/html", nil, push.OutcomeDefinitive, "did not return an image"},
		{"/gif", []string{"image/png", "image/jpeg"}, push.OutcomeDefinitive, "does not take image/gif"},
		{"/missing", nil, push.OutcomeDefinitive, "HTTP 404"},
		{"/busy", nil, push.OutcomeRetryable, "HTTP 503"},
		{"/slow", nil, push.OutcomeRetryable, "could not be downloaded"},
		{"/empty", nil, push.OutcomeDefinitive, "no data"},
	}
	for _, tt := range tests {
		_, err := f.Fetch(context.Background(), srv.URL+tt.path, tt.accept...)
		if err == nil || !strings.Contains(err.Error(), tt.says) || outcome(t, err) != tt.outcome {
			t.Errorf("Fetch(%s) = %v; want %s mentioning %q", tt.path, err, tt.outcome, tt.says)
		}
		if err != nil && strings.Contains(err.Error(), srv.URL) {
			t.Errorf("Fetch(%s) error quotes the URL: %v", tt.path, err)
		}
	}
	var se *push.SendError
	_, err := f.Fetch(context.Background(), srv.URL+"/busy")
	if errors.As(err, &se) && se.RetryAfter != 7*time.Second {
		t.Errorf("busy image host: RetryAfter %s, want 7s", se.RetryAfter)
	}
	img, err := f.Fetch(context.Background(), srv.URL+"/png-as-octets", "image/png")
	if err != nil || img.ContentType != "image/png" || !bytes.Equal(img.Data, pngBody(10)) {
		t.Errorf("a PNG served as octets: %+v, %v", img.ContentType, err)
	}
}

func TestCheckURL(t *testing.T) {
	f := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}})
	tests := []struct {
		url, reason string // reason empty: accepted
	}{
		{"https://img.example.com/a.png", ""},
		{"http://93.184.216.34/a.png", ""},
		{"http://internal.example/a.png", ""}, // a name: checked at dial time
		{"http://10.9.1.1/a.png", ""},         // allow-listed
		{"http://169.254.169.254/latest/meta-data/", "image_url_refused"},
		{"http://10.0.0.1/a.png", "image_url_refused"},
		{"http://[::1]/a.png", "image_url_refused"},
		{"http://[::ffff:192.168.0.1]/a.png", "image_url_refused"},
		{"http://localhost:8080/a.png", "image_url_refused"},
		{"http://x.localhost./a.png", "image_url_refused"},
		{"http://0.0.0.0/a.png", "image_url_refused"},
		{"file:///etc/passwd", "invalid_image_url"},
		{"gopher://example.com/", "invalid_image_url"},
		{"https://user:pw@example.com/a.png", "invalid_image_url"},
		{"/relative.png", "invalid_image_url"},
	}
	for _, tt := range tests {
		err := f.CheckURL(tt.url)
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("CheckURL(%s) = %v", tt.url, err)
		case tt.reason != "" && (push.ReasonOf(err) != tt.reason || push.KindOf(err) != push.Invalid):
			t.Errorf("CheckURL(%s) = %v, want Invalid %s", tt.url, err, tt.reason)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("CheckURL(%s) quotes the password: %v", tt.url, err)
		}
	}
}
