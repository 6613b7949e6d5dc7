// Package metrics exposes Herald's Prometheus metrics: the engine's events
// (as a push.Observer), the HTTP front's requests, and the backlog read from
// the store at scrape time. Every label set is bounded: route patterns,
// methods, statuses, platform names, job states, outcomes and request
// kinds; never a target, a key or an account.
package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of Herald's own.
const Namespace = "herald"

// BacklogSource reads the backlog at scrape time; *storage.Store is one.
type BacklogSource interface {
	// Backlog returns the active jobs of a bot, or of the whole service
	// when botID is 0.
	Backlog(ctx context.Context, botID int64) (int, error)
	// BacklogByPlatform returns the active jobs of each platform that has
	// any.
	BacklogByPlatform(ctx context.Context) (map[string]int, error)
}

// Options configure New.
type Options struct {
	// Logger receives scrape errors (default: discarded).
	Logger *slog.Logger
	// NoRuntime leaves out the Go runtime and process collectors.
	NoRuntime bool
	// Build, when its Version is set, is exported as herald_build_info
	// (always 1, the build in its labels).
	Build Build
}

// Build names the running build in herald_build_info.
type Build struct {
	Version   string // module version, e.g. v1.2.0
	Revision  string // VCS commit
	GoVersion string // Go release that built the binary
}

// Metrics holds Herald's metrics in a registry of its own. It implements
// push.Observer, and the HTTP front's request observer.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	jobs          *prometheus.CounterVec
	resolved      *prometheus.CounterVec
	platformCalls *prometheus.HistogramVec
	charged       prometheus.Counter
	refunded      prometheus.Counter
	replays       *prometheus.CounterVec
	rateLimited   prometheus.Counter
	events        *prometheus.CounterVec
	recvFailures  *prometheus.CounterVec
}

var (
	_ push.Observer           = (*Metrics)(nil)
	_ push.ResolutionObserver = (*Metrics)(nil)
)

// New returns a Metrics with every metric registered.
func New(opts Options) *Metrics {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		log: opts.Logger,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help: "Time to answer an HTTP request (a send includes its synchronous wait), by method and route pattern.",
			// Sends wait up to the synchronous wait (8 s by default).
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 8, 10, 30},
		}, []string{"method", "route"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "jobs_settled_total",
			Help: "Jobs that reached a settled state (succeeded, failed, canceled, expired, uncertain), by platform and state, each job once: an uncertain job resolved later stays counted as uncertain (see herald_jobs_resolved_total).",
		}, []string{"platform", "state"}),
		resolved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "jobs_resolved_total",
			Help: "Uncertain jobs resolved by a person or a check as succeeded or failed, by platform and outcome.",
		}, []string{"platform", "state"}),
		platformCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "platform", Name: "call_duration_seconds",
			Help:    "Time of one platform call, by platform and outcome (ok, definitive, retryable, uncertain).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"platform", "outcome"}),
		charged: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "points", Name: "charged_total",
			Help: "Points taken from balances by new sends.",
		}),
		refunded: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "points", Name: "refunded_total",
			Help: "Points returned to balances (canceled and expired jobs, and failed ones when the policy refunds them).",
		}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "idempotent_replays_total",
			Help: "Sends answered from their Idempotency-Key record (nothing sent again), by request kind (single, batch, multi).",
		}, []string{"kind"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rate_limited_total",
			Help: "Requests refused by the per-key rate limit (429).",
		}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "events_total",
			Help: "Inbound events of the bots, handled once each, by platform and kind (message, joined, left, moved).",
		}, []string{"platform", "kind"}),
		recvFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "receiver_failures_total",
			Help: "Failures of the bots' receivers (long polls, gateways), by platform; each is retried later with a growing wait.",
		}, []string{"platform"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.jobs, m.resolved, m.platformCalls, m.charged, m.refunded, m.replays, m.rateLimited, m.events, m.recvFailures)
	for _, k := range []push.RequestKind{push.RequestKindSingle, push.RequestKindBatch, push.RequestKindMulti} {
		m.replays.WithLabelValues(string(k))
	}
	if opts.Build.Version != "" {
		info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "build_info",
			Help: "The running build: always 1, with its version, VCS revision and Go release as labels.",
		}, []string{"version", "revision", "goversion"})
		info.WithLabelValues(opts.Build.Version, opts.Build.Revision, opts.Build.GoVersion).Set(1)
		m.reg.MustRegister(info)
	}
	if !opts.NoRuntime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// EventHandled implements push.Observer.
func (m *Metrics) EventHandled(platform string, kind push.EventKind) {
	m.events.WithLabelValues(platform, string(kind)).Inc()
}

// ReceiverFailed implements push.Observer.
func (m *Metrics) ReceiverFailed(platform string) { m.recvFailures.WithLabelValues(platform).Inc() }

// Platforms makes the per-platform series of the named platforms exist
// from the start (at zero), so that rates and alerts see them before their
// first event.
func (m *Metrics) Platforms(names []string) {
	for _, p := range names {
		for _, s := range push.States() {
			if s.Settled() {
				m.jobs.WithLabelValues(p, string(s))
			}
		}
	}
}

// WatchBacklog adds the backlog gauges, read from src at each scrape:
// herald_backlog_jobs (the whole service) and
// herald_platform_backlog_jobs{platform} (every named platform, 0 when it
// has none).
func (m *Metrics) WatchBacklog(src BacklogSource, platforms []string) {
	m.reg.MustRegister(&backlogCollector{
		src:       src,
		platforms: platforms,
		total: prometheus.NewDesc(Namespace+"_backlog_jobs",
			"Active (queued or running) jobs of the whole service, as counted for the backlog limit.", nil, nil),
		perPlatform: prometheus.NewDesc(Namespace+"_platform_backlog_jobs",
			"Active (queued or running) jobs, by platform.", []string{"platform"}, nil),
	})
}

// Calls are counters of what a node asks of the services it shares with
// other nodes; a nil one is not exported.
type Calls struct {
	// DBStatements and DBCommits count the statements sent to PostgreSQL
	// (BEGIN and COMMIT included) and the transactions committed there.
	DBStatements, DBCommits func() int64
	// RedisCommands and RedisRoundTrips count the commands sent to Redis
	// and the round trips (a pipeline is one).
	RedisCommands, RedisRoundTrips func() int64
}

// WatchCalls adds the counters of c, read at each scrape:
// herald_db_statements_total, herald_db_commits_total,
// herald_redis_commands_total and herald_redis_round_trips_total.
func (m *Metrics) WatchCalls(c Calls) {
	add := func(name, help string, f func() int64) {
		if f != nil {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help},
				func() float64 { return float64(f()) }))
		}
	}
	add("db_statements_total", "Statements sent to PostgreSQL, BEGIN and COMMIT included (those of a pipeline one by one).", c.DBStatements)
	add("db_commits_total", "Transactions committed on PostgreSQL.", c.DBCommits)
	add("redis_commands_total", "Commands sent to Redis, those of pipelines one by one.", c.RedisCommands)
	add("redis_round_trips_total", "Round trips to Redis (a pipeline is one).", c.RedisRoundTrips)
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics when asked for). A failing backlog read leaves those gauges
// out of that scrape and is logged; the other metrics are still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          errorLog{m.log},
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg,
		EnableOpenMetrics: true,
	})
}

// Registry returns the registry, for adding an application's own metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// HTTPRequest records one answered request. route is the route pattern
// (never the raw path); unmatched requests are counted under "unmatched".
func (m *Metrics) HTTPRequest(method, route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
	default:
		method = "other" // keeps the label set bounded
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}

// JobSettled implements push.Observer.
func (m *Metrics) JobSettled(platform string, state push.State) {
	m.jobs.WithLabelValues(platform, string(state)).Inc()
}

// JobResolved implements push.ResolutionObserver.
func (m *Metrics) JobResolved(platform string, state push.State) {
	m.resolved.WithLabelValues(platform, string(state)).Inc()
}

// PlatformCall implements push.Observer.
func (m *Metrics) PlatformCall(platform string, d time.Duration, outcome string) {
	m.platformCalls.WithLabelValues(platform, outcome).Observe(d.Seconds())
}

// PointsCharged implements push.Observer.
func (m *Metrics) PointsCharged(n int64) { m.charged.Add(float64(n)) }

// PointsRefunded implements push.Observer.
func (m *Metrics) PointsRefunded(n int64) { m.refunded.Add(float64(n)) }

// Replay implements push.Observer.
func (m *Metrics) Replay(kind push.RequestKind) { m.replays.WithLabelValues(string(kind)).Inc() }

// RateLimited implements push.Observer.
func (m *Metrics) RateLimited() { m.rateLimited.Inc() }

// backlogCollector reads the backlog from the store at each scrape.
type backlogCollector struct {
	src                BacklogSource
	platforms          []string
	total, perPlatform *prometheus.Desc
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.total
	ch <- c.perPlatform
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	total, err := c.src.Backlog(ctx, 0)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.total, fmt.Errorf("read the backlog: %w", err))
	} else {
		ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(total))
	}
	by, err := c.src.BacklogByPlatform(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.perPlatform, fmt.Errorf("read the backlog by platform: %w", err))
		return
	}
	seen := make(map[string]bool, len(c.platforms))
	for _, p := range c.platforms {
		seen[p] = true
		ch <- prometheus.MustNewConstMetric(c.perPlatform, prometheus.GaugeValue, float64(by[p]), p)
	}
	for p, n := range by {
		if !seen[p] { // jobs of a platform this process does not run
			ch <- prometheus.MustNewConstMetric(c.perPlatform, prometheus.GaugeValue, float64(n), p)
		}
	}
}

// errorLog adapts slog to promhttp's error log.
type errorLog struct{ log *slog.Logger }

func (l errorLog) Println(v ...any) { l.log.Warn("metrics", "err", fmt.Sprint(v...)) }
