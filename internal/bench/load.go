package bench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loadOptions shape the load.
type loadOptions struct {
	bases       []string // the API's base URLs, ending in /api: worker i sends to the (i mod n)-th (one per node)
	apiKey      string
	concurrency int
	rate        float64 // requests per second in all; 0: each worker sends as soon as it is answered
	timeout     time.Duration
}

// window is the measured part of a run: answers that arrive in it are
// counted.
type window struct {
	start, end atomic.Int64 // Unix ns; end 0 while open
}

func (w *window) contains(t time.Time) bool {
	s, e := w.start.Load(), w.end.Load()
	n := t.UnixNano()
	return s != 0 && n >= s && (e == 0 || n < e)
}

// tally is one worker's account of the answers in the window.
type tally struct {
	latency   Histogram
	statuses  map[string]int64
	ok        int64
	delivered int64
	firstErr  string
}

func newTally() *tally { return &tally{statuses: make(map[string]int64)} }

func (t *tally) merge(o *tally) {
	t.latency.Merge(&o.latency)
	for k, v := range o.statuses {
		t.statuses[k] += v
	}
	t.ok += o.ok
	t.delivered += o.delivered
	if t.firstErr == "" {
		t.firstErr = o.firstErr
	}
}

// live counts every answer as it comes, for the progress line.
type live struct {
	answered  atomic.Int64
	failed    atomic.Int64
	delivered atomic.Int64
}

// loader sends the scenario's requests from concurrency workers.
type loader struct {
	opts   loadOptions
	sc     *scenario
	client *http.Client // for an https server; plain http uses raw
	raw    []*httpConn  // per worker, for a plain-http server
	path   string       // the base URLs' path, for raw (the same on every node)
	auth   string       // the Authorization header's value
	conns  connSet
	win    window
	live   live

	stop    chan struct{}
	ctx     context.Context // requests' context, canceled when halt gives up waiting
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	tallies []*tally
}

func newLoader(opts loadOptions, sc *scenario) *loader {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        opts.concurrency * 2,
		MaxIdleConnsPerHost: opts.concurrency * 2,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	l := &loader{
		opts:   opts,
		sc:     sc,
		client: &http.Client{Transport: tr, Timeout: opts.timeout},
		stop:   make(chan struct{}),
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.auth = "Bearer " + opts.apiKey
	raw := make([]*httpConn, opts.concurrency+1) // the last one for send outside the workers
	for i := range raw {
		u, err := url.Parse(opts.bases[i%len(opts.bases)])
		if err != nil || u.Scheme != "http" {
			raw = nil
			break
		}
		addr := u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
		l.path = strings.TrimSuffix(u.EscapedPath(), "/")
		raw[i] = &httpConn{addr: addr, host: u.Host, timeout: opts.timeout, conns: &l.conns}
	}
	l.raw = raw
	return l
}

// start launches the workers. Open loop (rate set): worker i sends its
// k-th request at t0 + (i + k·concurrency)/rate, and its latency counts
// from that intended time, so a slow server cannot hide its queueing
// (no coordinated omission).
func (l *loader) start() {
	t0 := time.Now()
	for i := 0; i < l.opts.concurrency; i++ {
		t := newTally()
		l.tallies = append(l.tallies, t)
		l.wg.Add(1)
		go l.work(i, t0, t)
	}
}

func (l *loader) work(w int, t0 time.Time, t *tally) {
	defer l.wg.Done()
	var interval time.Duration
	var next time.Time
	if l.opts.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(l.opts.concurrency) / l.opts.rate)
		next = t0.Add(time.Duration(float64(time.Second) * float64(w) / l.opts.rate))
	}
	buf := new(bytes.Buffer)
	for seq := uint64(0); ; seq++ {
		var intended time.Time
		if interval > 0 {
			intended = next
			next = next.Add(interval)
			if d := time.Until(intended); d > 0 {
				timer := time.NewTimer(d)
				select {
				case <-timer.C:
				case <-l.stop:
					timer.Stop()
					return
				}
			}
		}
		select {
		case <-l.stop:
			return
		default:
		}
		req := l.sc.next(w, seq)
		began := time.Now()
		if intended.IsZero() {
			intended = began
		}
		status, body, err := l.send(w, req, buf)
		done := time.Now()
		l.live.answered.Add(1)
		var ok bool
		var delivered int
		if err == nil {
			ok, delivered = l.sc.judge(status, body)
		}
		if !ok {
			l.live.failed.Add(1)
		}
		l.live.delivered.Add(int64(delivered))
		if !l.win.contains(done) {
			continue
		}
		t.latency.Record(done.Sub(intended))
		key := strconv.Itoa(status)
		if err != nil {
			key = "error"
			if t.firstErr == "" {
				t.firstErr = err.Error()
			}
		} else if !ok && t.firstErr == "" {
			t.firstErr = key + " " + string(body[:min(len(body), 300)])
		}
		t.statuses[key]++
		if ok {
			t.ok++
		}
		t.delivered += int64(delivered)
	}
}

// send makes one request as worker w (-1: outside the workers) and reads
// the whole answer into buf.
func (l *loader) send(w int, r request, buf *bytes.Buffer) (int, []byte, error) {
	if l.raw != nil {
		if w < 0 {
			w = len(l.raw) - 1
		}
		headers := []header{{"Content-Type", "application/json"}, {"Authorization", l.auth}}
		if r.key != "" {
			headers = append(headers, header{"Idempotency-Key", r.key})
		}
		status, err := l.raw[w].post(l.path+r.path, headers, r.body, buf)
		if err != nil && l.ctx.Err() != nil {
			err = errCut
		}
		return status, buf.Bytes(), err
	}
	base := l.opts.bases[0]
	if w >= 0 {
		base = l.opts.bases[w%len(l.opts.bases)]
	}
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", l.auth)
	if r.key != "" {
		req.Header.Set("Idempotency-Key", r.key)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, buf.Bytes(), nil
}

// halt stops the workers and waits up to grace for their requests in
// flight (answers after the window closed are not counted), then cancels
// those still waiting.
func (l *loader) halt(grace time.Duration) {
	close(l.stop)
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		l.cancel()
		l.conns.cut()
		<-done
	}
	l.cancel()
	l.conns.cut()
	for _, c := range l.raw {
		c.close()
	}
	l.client.CloseIdleConnections()
}

// result merges the workers' tallies.
func (l *loader) result() *tally {
	all := newTally()
	for _, t := range l.tallies {
		all.merge(t)
	}
	return all
}
