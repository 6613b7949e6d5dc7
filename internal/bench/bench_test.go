package bench

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHistogramQuantiles compares the histogram's quantiles with the exact
// ones of a sorted sample: within its 1/64 relative error.
func TestHistogramQuantiles(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		gen  func() time.Duration
	}{
		{"uniform microseconds", func() time.Duration { return time.Duration(rnd.IntN(1000)) * time.Microsecond }},
		{"exponential milliseconds", func() time.Duration { return time.Duration(rnd.ExpFloat64() * float64(5*time.Millisecond)) }},
		{"tiny values", func() time.Duration { return time.Duration(rnd.IntN(64)) }},
		{"long tail", func() time.Duration {
			if rnd.IntN(100) == 0 {
				return time.Duration(rnd.IntN(10)) * time.Second
			}
			return time.Duration(rnd.IntN(20)) * time.Millisecond
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			var all []time.Duration
			for i := 0; i < 20000; i++ {
				d := tt.gen()
				all = append(all, d)
				h.Record(d)
			}
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			if h.Count() != uint64(len(all)) || h.Max() != all[len(all)-1] {
				t.Fatalf("count %d max %v, want %d and %v", h.Count(), h.Max(), len(all), all[len(all)-1])
			}
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				exact := all[int(q*float64(len(all)))-1]
				got := h.Quantile(q)
				if diff := got - exact; diff > exact/50+1 || -diff > exact/50+1 {
					t.Errorf("q%.3f = %v, exact %v: more than 2%% off", q, got, exact)
				}
			}
		})
	}
}

// TestHistogramMerge: merged histograms answer as one that saw it all.
func TestHistogramMerge(t *testing.T) {
	var a, b, all Histogram
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	for _, q := range []float64{0.5, 0.99} {
		if a.Quantile(q) != all.Quantile(q) || a.Count() != all.Count() || a.Max() != all.Max() || a.Mean() != all.Mean() {
			t.Fatalf("merged q%.2f %v (count %d), one histogram %v (count %d)", q, a.Quantile(q), a.Count(), all.Quantile(q), all.Count())
		}
	}
}

// TestPlatformSpeaksBotAPI: the fake Telegram refuses what the real one
// refuses (unknown token, missing chat or text, unknown method) with the
// Bot API's error shape, and counts only what it accepted; net/http's
// client reads its answers on kept-alive connections.
func TestPlatformSpeaksBotAPI(t *testing.T) {
	token := NewToken()
	p, err := NewPlatform(0, token)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		name, path, body string
		status           int
		answer           string
	}{
		{"message", "/bot" + token + "/sendMessage", `{"chat_id":100001,"text":"hi"}`, 200, `"ok":true,"result":{"message_id":1`},
		{"HTML message", "/bot" + token + "/sendMessage", `{"chat_id":"100001","text":"<b>hi</b>","parse_mode":"HTML"}`, 200, `"message_id":2`},
		{"photo", "/bot" + token + "/sendPhoto", `{"chat_id":100001,"photo":"https://example.com/a.png"}`, 200, `"message_id":3`},
		{"unknown token", "/bot" + NewToken() + "/sendMessage", `{"chat_id":1,"text":"hi"}`, 401, `"error_code":401`},
		{"no chat", "/bot" + token + "/sendMessage", `{"text":"hi"}`, 400, `chat_id is empty`},
		{"no text", "/bot" + token + "/sendMessage", `{"chat_id":1}`, 400, `message text is empty`},
		{"bad parse mode", "/bot" + token + "/sendMessage", `{"chat_id":1,"text":"x","parse_mode":"Wiki"}`, 400, `unsupported parse_mode`},
		{"not JSON", "/bot" + token + "/sendMessage", `chat_id=1`, 400, `can't parse JSON`},
		{"unknown method", "/bot" + token + "/sendDice", `{"chat_id":1}`, 404, `"ok":false`},
	}
	for _, tt := range tests {
		resp, err := http.Post(p.URL()+tt.path, "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !bytes.Contains(body, []byte(tt.answer)) {
			t.Errorf("%s: %d %s, want %d with %s", tt.name, resp.StatusCode, body, tt.status, tt.answer)
		}
	}
	// A body of unknown length comes chunked.
	resp, err := http.Post(p.URL()+"/bot"+token+"/sendMessage", "application/json", io.MultiReader(strings.NewReader(`{"chat_id":1,`), strings.NewReader(`"text":"chunked"}`)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"message_id":4`)) {
		t.Errorf("chunked request: %d %s", resp.StatusCode, body)
	}
	if p.Delivered() != 4 || p.Refused() != 6 {
		t.Errorf("delivered %d, refused %d; want 4 and 6", p.Delivered(), p.Refused())
	}
}

// TestOpenLoopCountsFromIntendedTime: against a server that takes 20 ms
// per request, one at a time, an open-loop load of 200 requests a second
// falls ever further behind its schedule, and the latency it reports
// counts that wait (no coordinated omission); a closed loop reports the
// service time alone.
func TestOpenLoopCountsFromIntendedTime(t *testing.T) {
	sem := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		time.Sleep(20 * time.Millisecond)
		<-sem
		w.Write([]byte(`{"code":0,"message":"","data":{"status":"SUCCESS"}}`))
	}))
	defer srv.Close()
	tgt := target{key: "k", bots: []botTargets{{id: 1, targets: []int64{1}}}}
	measure := func(rate float64) *tally {
		sc, err := newScenario(Single, "t", tgt, 1)
		if err != nil {
			t.Fatal(err)
		}
		l := newLoader(loadOptions{bases: []string{srv.URL}, apiKey: "k", concurrency: 4, rate: rate, timeout: 10 * time.Second}, sc)
		l.win.start.Store(time.Now().UnixNano())
		l.start()
		time.Sleep(time.Second)
		l.win.end.Store(time.Now().UnixNano())
		l.halt(5 * time.Second)
		return l.result()
	}
	closed, open := measure(0), measure(200)
	if c := closed.latency.Quantile(0.5); c < 20*time.Millisecond || c > 150*time.Millisecond {
		t.Errorf("closed loop p50 %v, want the service time of about 20 ms per request times the 4 workers queued at most", c)
	}
	// 200 intended per second, 50 served: after a second the schedule is
	// hundreds of milliseconds ahead of the answers.
	if o := open.latency.Quantile(0.9); o < 300*time.Millisecond {
		t.Errorf("open loop p90 %v: the wait behind the schedule is not counted", o)
	}
	if closed.ok == 0 || open.ok == 0 {
		t.Errorf("ok answers: closed %d, open %d", closed.ok, open.ok)
	}
}

// TestLoadSpreadsOverNodes: with the API bases of several nodes, the load
// workers send to each in turn (worker i to the (i mod n)-th), so every
// node gets its share.
func TestLoadSpreadsOverNodes(t *testing.T) {
	var counts [3]atomic.Int64
	var urls []string
	for i := range counts {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counts[i].Add(1)
			w.Write([]byte(`{"code":0,"message":"","data":{"status":"SUCCESS"}}`))
		}))
		defer srv.Close()
		urls = append(urls, srv.URL+"/api")
	}
	tgt := target{key: "k", bots: []botTargets{{id: 1, targets: []int64{1}}}}
	sc, err := newScenario(Single, "t", tgt, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := newLoader(loadOptions{bases: urls, apiKey: "k", concurrency: 6, rate: 300, timeout: 10 * time.Second}, sc)
	l.win.start.Store(time.Now().UnixNano())
	l.start()
	time.Sleep(500 * time.Millisecond)
	l.win.end.Store(time.Now().UnixNano())
	l.halt(5 * time.Second)
	if l.result().ok == 0 {
		t.Fatal("no answer")
	}
	total := counts[0].Load() + counts[1].Load() + counts[2].Load()
	for i := range counts {
		// Open loop: each worker sends at the same rate, two per node.
		if n := counts[i].Load(); n < total/6 {
			t.Errorf("node %d got %d of %d requests, want about a third", i+1, n, total)
		}
	}
}
