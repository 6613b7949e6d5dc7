package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/transport"
)

// recorder records the URL of every request a tab makes.
type recorder struct {
	mu   sync.Mutex
	urls []string
}

// recordRequests starts recording; call it before the navigation.
func recordRequests(t *testing.T, ctx context.Context) *recorder {
	t.Helper()
	r := &recorder{}
	// The chromedp tab enables the Network domain; Listen sees its events
	// in order, before the reply to the navigation.
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			r.mu.Lock()
			r.urls = append(r.urls, e.Request.URL)
			r.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// outside returns the recorded requests not to origin, after a pause that
// lets late loads (fonts, images, scripts) show themselves.
func (r *recorder) outside(t *testing.T, ctx context.Context, origin string) []string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.ContainsFunc(r.urls, func(u string) bool { return strings.HasPrefix(u, origin+"/") }) {
		t.Fatalf("the page's own request was not recorded (%v): the network listener does not work", r.urls)
	}
	var out []string
	for _, u := range r.urls {
		if !strings.HasPrefix(u, origin+"/") {
			out = append(out, u)
		}
	}
	return out
}

// TestDocsPageInChromium loads /api/docs in real headless Chromium,
// without a key: every endpoint's heading is visible with its method and
// path, the guide's sections are there, and the page asks the network for
// nothing but itself from the test server.
func TestDocsPageInChromium(t *testing.T) {
	ctx := testkit.Chromium(t, 90*time.Second)
	h := testkit.New(t)
	docs := h.CallRoot(t, "GET", "/api/docs") // the page is checked against the document too
	if docs.Status != 200 || !strings.HasPrefix(docs.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /api/docs: %d %v", docs.Status, docs.Header)
	}
	rec := recordRequests(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(h.Root+"/api/docs"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("load the docs page: %v", err)
	}
	eval := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return n
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	routes := h.API.Routes()
	counts := map[string][2]int{
		"reading rules":                  {eval(`document.querySelectorAll("ol.rules li").length`), 7},
		"curl examples":                  {eval(`[...document.querySelectorAll("pre code")].filter(c => c.textContent.startsWith("curl ")).length`), len(routes)},
		"limit rows":                     {eval(`document.querySelectorAll("#limits + table tr").length - 1`), 11},
		"error rows":                     {eval(`document.querySelectorAll("#errors ~ table")[0].querySelectorAll("tr").length - 1`), 10},
		"scripts, images, frames, links": {eval(`document.querySelectorAll("script, img, iframe, link, [src], object, embed").length`), 0},
	}
	if title != "Herald message push API" {
		t.Errorf("title %q", title)
	}
	for what, c := range counts {
		if c[0] != c[1] {
			t.Errorf("%d %s, want %d", c[0], what, c[1])
		}
	}
	for _, sel := range []string{"#authentication", "#reading-results", "#limits", "#errors"} {
		if err := chromedp.Do(ctx, chromedp.ScrollIntoView(sel), chromedp.WaitVisible(sel)); err != nil {
			t.Fatalf("section %s: %v", sel, err)
		}
	}
	for _, rt := range routes {
		sel := "h3#" + rt.Doc.ID
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		err := chromedp.Do(wctx, chromedp.ScrollIntoView(sel), chromedp.WaitVisible(sel))
		var text string
		if err == nil {
			text, err = chromedp.Run(wctx, chromedp.Text(sel))
		}
		wcancel()
		if err != nil {
			t.Errorf("%s %s: heading %s not visible: %v", rt.Method, rt.Path, sel, err)
			continue
		}
		if want := rt.Method + transport.OpenAPIPath(rt.Path); strings.Join(strings.Fields(text), "") != want {
			t.Errorf("heading %s reads %q, want %q", sel, text, want)
		}
	}
	if out := rec.outside(t, ctx, h.Root); len(out) > 0 {
		t.Errorf("the page requested %v, outside the test server", out)
	}
}

// TestOutsideRequestsAreSeen proves the check above can fail: a page on
// one loopback server that loads a style sheet and an image from another
// is caught.
func TestOutsideRequestsAreSeen(t *testing.T) {
	ctx := testkit.Chromium(t, 90*time.Second)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body { color: black; }")
	}))
	defer other.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>p</title><link rel="stylesheet" href="%s/site.css"></head><body><img src="%s/logo.png" alt=""><h1>page</h1></body></html>`, other.URL, other.URL)
	}))
	defer page.Close()
	rec := recordRequests(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(page.URL+"/"), chromedp.WaitVisible("h1")); err != nil {
		t.Fatal(err)
	}
	out := rec.outside(t, ctx, page.URL)
	want := []string{other.URL + "/logo.png", other.URL + "/site.css"}
	slices.Sort(out)
	if !slices.Equal(slices.Compact(out), want) {
		t.Fatalf("outside requests %v, want %v", out, want)
	}
}
