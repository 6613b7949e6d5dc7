// Package bench is Herald's load generator and measurement, behind
// `herald bench`: in the manner of nats bench or redis-benchmark, it runs a
// scenario of send requests against an embedded server (a child herald
// serve process on a fresh database, with an instant fake Telegram) or a
// running one, and reports throughput, latency percentiles, answers by
// status and, for the embedded server, its CPU time, allocations per send
// and peak memory.
package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/storage"
)

// Config describes a run. Zero fields take the defaults given.
type Config struct {
	// Scenario is one of Scenarios() (default single).
	Scenario string
	// Concurrency is the number of load workers, each with one request in
	// flight at a time (default 50).
	Concurrency int
	// Duration is the measured time (default 10 s).
	Duration time.Duration
	// Warmup is load sent but not measured, before Duration (0 or less:
	// none).
	Warmup time.Duration
	// Rate, when positive, is the open-loop request rate in all (requests
	// per second): latency counts from each request's intended send time.
	Rate float64
	// BatchSize is the number of targets of a batch or multi request, and
	// of the chats that single sends go to in turn (default 50).
	BatchSize int
	// PlatformLatency is how long the fake platform takes to answer
	// (default 0; 100 ms for slow; 1 s for accept; negative: 0).
	PlatformLatency time.Duration

	// URL, when set, is a running server's API base (ending in /api),
	// addressed with Key, Bot and Targets, instead of an embedded server.
	URL     string
	Key     string
	Bot     int64
	Targets []int64

	// Embedded server.
	// Bin is the herald binary that runs `serve`.
	Bin string
	// DB is a new SQLite file, or a PostgreSQL URL in whose database the
	// run makes a schema of its own (dropped at the end); default a
	// SQLite file in a temporary directory.
	DB string
	// Redis, with a PostgreSQL DB, runs the server in the scale-out mode
	// (in a Redis namespace of the run's own, deleted at the end).
	Redis string
	// PGAsyncCommit runs the nodes' PostgreSQL sessions with
	// synchronous_commit off: a commit is answered before its WAL is on
	// disk (not durable; a bench option, to show where the limit moves
	// when the disk is not it). The report says so.
	PGAsyncCommit bool
	// Nodes is the number of herald serve processes the load is spread
	// over (default 1; more than one needs the scale-out mode: Redis and a
	// PostgreSQL DB).
	Nodes int
	// WorkerNodes is the number of herald worker processes (default 0:
	// the serve nodes send; more makes the serve nodes API only, with
	// --workers 0, and the worker nodes send; needs the scale-out mode).
	WorkerNodes int
	// Workers is each node's number of workers (default enough for every
	// target of every request in flight: concurrency × targets per
	// request, and more when the platform is slower than the sync wait).
	Workers int
	// SyncWait is the server's synchronous wait (default the server's, 8 s;
	// 100 ms for accept).
	SyncWait time.Duration
	// Points runs the server with the points system on (the account gets
	// a balance that lasts).
	Points bool
	// LogLevel is the server's log level (default info; the log goes to a
	// file in the work directory).
	LogLevel string
	// ServerArgs are more flags for herald serve.
	ServerArgs []string
	// ServerEnv is herald serve's environment (nil: this process's).
	ServerEnv []string
	// NodeProcs is each node's GOMAXPROCS. 0: with more than one node
	// (serve and worker) on this machine, its cores shared out among them
	// (at least one each), as a node on a machine of its own would have
	// its own; with one, Go's default. -1: Go's default for every node.
	// A GOMAXPROCS in ServerEnv is kept unless NodeProcs is above 0.
	NodeProcs int
	// ProfileDir, when set, receives the server's CPU, allocation and heap
	// profiles of the measured time (cpu.pprof, allocs.pprof, heap.pprof).
	ProfileDir string
	// Seed creates the account, key, bots and targets of an embedded
	// run in its database.
	Seed Seeder

	// Progress, when set, receives a live progress line each second (for
	// a terminal).
	Progress io.Writer
}

// Seeder creates the benchmark's account, API key, bots and targets in
// the database at db, as the server will read them.
type Seeder func(ctx context.Context, db string, req SeedRequest) (Seed, error)

// SeedRequest says what to create: one account (with a lasting balance
// when Points) holding bots on the telegram platform.
type SeedRequest struct {
	Points bool
	Bots   []SeedBot
	// KeyFile is the file of the secret key that seals bot credentials
	// (created when missing); the server is started with the same one.
	KeyFile string
}

// SeedBot is a Telegram bot to create with its config and target chats.
type SeedBot struct {
	Config string   // the bot's JSON config
	Chats  []string // user chat ids to bind as targets
}

// Seed is what a Seeder created.
type Seed struct {
	Key  string // the plain API key
	Bots []SeededBot
}

// SeededBot is a created bot with its targets' ids, in the order asked.
type SeededBot struct {
	ID      int64
	Targets []int64
}

func (c *Config) defaults() error {
	if c.Scenario == "" {
		c.Scenario = Single
	}
	known := false
	for _, s := range Scenarios() {
		known = known || s == c.Scenario
	}
	if !known {
		return fmt.Errorf("unknown scenario %q: use one of %s", c.Scenario, strings.Join(Scenarios(), ", "))
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 50
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	c.Warmup = max(c.Warmup, 0)
	if c.BatchSize <= 0 {
		c.BatchSize = 50
	}
	if c.PlatformLatency == 0 {
		switch c.Scenario {
		case Slow:
			c.PlatformLatency = 100 * time.Millisecond
		case Accept:
			c.PlatformLatency = time.Second
		}
	} else if c.PlatformLatency < 0 {
		c.PlatformLatency = 0
	}
	if c.SyncWait <= 0 && c.Scenario == Accept {
		c.SyncWait = 100 * time.Millisecond
	}
	if c.URL != "" {
		if c.Key == "" || c.Bot <= 0 || len(c.Targets) == 0 {
			return errors.New("--url needs --key, --bot and --targets (the target ids of that bot)")
		}
		if c.Nodes > 1 || c.WorkerNodes > 0 {
			return errors.New("--nodes and --worker-nodes start nodes of the run's own: leave them out with --url")
		}
		return nil
	}
	if c.Redis != "" && !storage.IsPostgres(c.DB) {
		return errors.New("--redis needs a PostgreSQL --db: the scale-out mode shares a PostgreSQL database")
	}
	if c.Nodes <= 0 {
		c.Nodes = 1
	}
	if c.WorkerNodes < 0 {
		return errors.New("--worker-nodes cannot be negative")
	}
	if c.PGAsyncCommit && !storage.IsPostgres(c.DB) {
		return errors.New("--pg-async-commit needs a PostgreSQL --db")
	}
	if (c.Nodes > 1 || c.WorkerNodes > 0) && c.Redis == "" {
		return errors.New("--nodes above 1 and --worker-nodes need the scale-out mode: give --redis and a PostgreSQL --db, which the nodes share")
	}
	if c.Bin == "" {
		return errors.New("bench: Config.Bin (the herald binary) is required for an embedded server")
	}
	if c.Seed == nil {
		return errors.New("bench: Config.Seed is required for an embedded server")
	}
	if c.Workers <= 0 {
		per := 1
		if c.Scenario == Batch || c.Scenario == Multi {
			per = c.BatchSize
		}
		c.Workers = c.Concurrency * per
		if c.SyncWait > 0 && c.PlatformLatency > c.SyncWait {
			c.Workers *= int(min(20, (c.PlatformLatency+c.SyncWait-1)/c.SyncWait))
		}
		c.Workers = max(c.Workers, 16)
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	return nil
}

func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run runs the benchmark described by cfg and reports on it.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	id := runID()
	rep := &Report{
		Scenario: cfg.Scenario, Concurrency: cfg.Concurrency, Rate: cfg.Rate,
		DurationSec: cfg.Duration.Seconds(), WarmupSec: cfg.Warmup.Seconds(),
		PlatformLatencyMs: ms(cfg.PlatformLatency),
	}
	var (
		tgt      target
		servers  nodes
		platform *Platform
		analyze  func(context.Context) error
	)
	if cfg.URL != "" {
		rep.Server = "url"
		tgt = target{key: cfg.Key, bots: []botTargets{{id: cfg.Bot, targets: cfg.Targets}}}
		rep.BatchSize = min(cfg.BatchSize, len(cfg.Targets))
	} else {
		e, err := startEmbedded(ctx, &cfg, id)
		if err != nil {
			return nil, err
		}
		defer e.close()
		servers, platform, tgt, analyze = e.nodes, e.platform, e.target, e.analyze
		rep.Server = e.kind
		rep.BatchSize = cfg.BatchSize
		rep.Workers = cfg.Workers
		rep.Nodes, rep.WorkerNodes, rep.PGAsyncCommit = cfg.Nodes, cfg.WorkerNodes, cfg.PGAsyncCommit
		rep.NodeProcs = e.procs
		rep.SyncWaitMs = ms(cfg.SyncWait)
		rep.Points = cfg.Points
	}
	bases := []string{strings.TrimRight(cfg.URL, "/")}
	if servers != nil {
		bases = servers.apis()
	}
	sc, err := newScenario(cfg.Scenario, "b"+id, tgt, rep.BatchSize)
	if err != nil {
		return nil, err
	}
	timeout := 5 * time.Minute
	l := newLoader(loadOptions{bases: bases, apiKey: tgt.key, concurrency: cfg.Concurrency, rate: cfg.Rate, timeout: timeout}, sc)
	if cfg.Scenario == Replay {
		// The first send of the key is delivered; every later one replays it.
		req := sc.next(0, 0)
		status, body, err := l.send(-1, req, new(bytes.Buffer))
		if err != nil {
			return nil, fmt.Errorf("the replayed send: %w", err)
		}
		if ok, _ := sc.judge(status, body); !ok {
			return nil, fmt.Errorf("the replayed send was answered %d: %s", status, body)
		}
	}
	var before, after procSample
	var deliveredBefore int64
	var probe *costProbe
	if servers != nil && (storage.IsPostgres(cfg.DB) || cfg.Redis != "") {
		var pgDSN string
		if storage.IsPostgres(cfg.DB) {
			pgDSN = cfg.DB
		}
		if probe, err = newCostProbe(pgDSN, cfg.Redis); err != nil {
			return nil, err
		}
		defer probe.close()
	}
	var costsBefore, costsAfter costReading
	l.start()
	stopProgress := progress(cfg.Progress, l, cfg)
	err = sleep(ctx, cfg.Warmup)
	if err == nil && analyze != nil {
		// The statistics of the tables as the warm-up left them, as a
		// running installation has them (see analyzeSchema).
		err = analyze(ctx)
	}
	if err != nil {
		l.halt(time.Second)
		stopProgress()
		return nil, err
	}
	var waitProfiles func() error
	if servers != nil {
		if cfg.ProfileDir != "" {
			if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
				return nil, err
			}
			waitProfiles = servers[0].profiles(ctx, cfg.ProfileDir, cfg.Duration)
		}
		if probe != nil {
			costsBefore = probe.read(ctx)
		}
		if before, err = servers.sample(ctx); err != nil {
			return nil, fmt.Errorf("read the server's figures: %w", err)
		}
		deliveredBefore = platform.Delivered()
	}
	selfBefore := selfCPU()
	l.win.start.Store(time.Now().UnixNano())
	rss := rssSampler(servers, cfg.Duration)
	err = sleep(ctx, cfg.Duration)
	end := time.Now()
	l.win.end.Store(end.UnixNano())
	rssSamples := rss()
	elapsed := end.Sub(time.Unix(0, l.win.start.Load()))
	selfUsed := selfCPU() - selfBefore
	var deliveredAfter int64
	if servers != nil {
		deliveredAfter = platform.Delivered()
		after, _ = servers.sample(context.WithoutCancel(ctx))
		if probe != nil {
			costsAfter = probe.read(context.WithoutCancel(ctx))
		}
	}
	l.halt(cfg.SyncWait + 10*time.Second)
	stopProgress()
	if err != nil {
		return nil, err
	}
	res := l.result()
	rep.fill(res, elapsed)
	rep.LoadCPUSeconds = selfUsed.Seconds()
	if rep.Requests > 0 {
		rep.LoadCPUPerRequestUs = selfUsed.Seconds() * 1e6 / float64(rep.Requests)
	}
	if servers != nil {
		rep.Deliveries = deliveredAfter - deliveredBefore
		rep.DeliveriesPerSec = float64(rep.Deliveries) / elapsed.Seconds()
		rep.ServerFigures = serverFigures(before, after, rssSamples, rep)
		if probe != nil {
			rep.Costs = costs(costsBefore, costsAfter, &before, &after, rep.Requests)
		}
		if waitProfiles != nil {
			if err := waitProfiles(); err != nil {
				return rep, fmt.Errorf("profiles: %w", err)
			}
			for _, f := range []string{"cpu.pprof", "allocs.pprof", "heap.pprof"} {
				rep.Profiles = append(rep.Profiles, filepath.Join(cfg.ProfileDir, f))
			}
		}
		if gone := servers.exited(); gone != nil {
			return rep, fmt.Errorf("a server exited during the run: %s", gone.logTail())
		}
		if rep.NotOK > 0 {
			rep.ServerLogTail = servers.logTail()
		}
	}
	return rep, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rssSampler reads the server's resident set every twentieth of d (at
// most each second, at least each ten); the returned function stops it and
// returns the samples.
func rssSampler(servers nodes, d time.Duration) func() []float64 {
	if servers == nil {
		return func() []float64 { return nil }
	}
	every := min(max(d/20, time.Second), 10*time.Second)
	stop := make(chan struct{})
	done := make(chan []float64, 1)
	go func() {
		var out []float64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if rss, err := servers.rss(); err == nil {
					out = append(out, rss)
				}
			case <-stop:
				done <- out
				return
			}
		}
	}()
	return func() []float64 { close(stop); return <-done }
}

// progress writes a live line each second to w until the returned
// function is called.
func progress(w io.Writer, l *loader, cfg Config) func() {
	if w == nil {
		return func() {}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		began := time.Now()
		var lastA, lastD int64
		for {
			select {
			case <-stop:
				fmt.Fprint(w, "\r\033[K")
				return
			case now := <-t.C:
				a, d, f := l.live.answered.Load(), l.live.delivered.Load(), l.live.failed.Load()
				phase := "warmup"
				if l.win.start.Load() != 0 {
					phase = "measure"
				}
				fmt.Fprintf(w, "\r\033[K%s %s %5.0fs  %8d req/s  %8d deliveries/s  %d not ok",
					cfg.Scenario, phase, now.Sub(began).Seconds(), a-lastA, d-lastD, f)
				lastA, lastD = a, d
			}
		}
	}()
	return func() { close(stop); <-done }
}

// Report is the outcome of a run.
type Report struct {
	Scenario          string  `json:"scenario"`
	Server            string  `json:"server"` // sqlite, postgres, postgres+redis, or url
	Concurrency       int     `json:"concurrency"`
	Rate              float64 `json:"rate,omitempty"` // open loop; 0: closed loop
	DurationSec       float64 `json:"duration_s"`
	WarmupSec         float64 `json:"warmup_s"`
	BatchSize         int     `json:"batch_size"`
	PlatformLatencyMs float64 `json:"platform_latency_ms"`
	SyncWaitMs        float64 `json:"sync_wait_ms,omitempty"`
	Workers           int     `json:"workers,omitempty"` // of each node that sends
	Nodes             int     `json:"nodes,omitempty"`
	WorkerNodes       int     `json:"worker_nodes,omitempty"`
	NodeProcs         int     `json:"node_procs,omitempty"`      // each node's GOMAXPROCS; 0: Go's default
	PGAsyncCommit     bool    `json:"pg_async_commit,omitempty"` // PostgreSQL commits not durable
	Points            bool    `json:"points,omitempty"`

	Requests         int64            `json:"requests"`   // answered in the measured time
	OK               int64            `json:"ok"`         // with the scenario's good answer
	Deliveries       int64            `json:"deliveries"` // messages the platform accepted
	RequestsPerSec   float64          `json:"requests_per_s"`
	OKPerSec         float64          `json:"ok_per_s"`
	DeliveriesPerSec float64          `json:"deliveries_per_s"`
	Latency          Latency          `json:"latency_ms"`
	Statuses         map[string]int64 `json:"statuses"` // answers by HTTP status ("error": no answer)
	NotOK            int64            `json:"not_ok"`
	FirstProblem     string           `json:"first_problem,omitempty"`

	// LoadCPUSeconds is the CPU time of this process (the load generator
	// and, for an embedded server, the fake platform) in the measured time.
	LoadCPUSeconds      float64 `json:"load_cpu_s"`
	LoadCPUPerRequestUs float64 `json:"load_cpu_per_request_us"`

	ServerFigures *ServerFigures `json:"server_figures,omitempty"`
	// Costs are what each request asked of PostgreSQL and Redis, on an
	// embedded server in the scale-out mode.
	Costs *Costs `json:"costs_per_request,omitempty"`
	// Probe is the ceiling line run after the scenario (see RunProbe).
	Probe    *Report  `json:"probe,omitempty"`
	Profiles []string `json:"profiles,omitempty"`
	// ServerLogTail is the end of the embedded server's log, when some
	// answers were not ok.
	ServerLogTail string `json:"server_log_tail,omitempty"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// ServerFigures are the embedded server's own costs in the measured time.
type ServerFigures struct {
	CPUSeconds                 float64   `json:"cpu_s"`
	CPUCores                   float64   `json:"cpu_cores"` // CPU seconds per second
	CPUPerRequestUs            float64   `json:"cpu_per_request_us"`
	AllocsPerRequest           float64   `json:"allocs_per_request"`
	AllocsPerDelivery          float64   `json:"allocs_per_delivery,omitempty"`
	AllocBytesPerReq           float64   `json:"alloc_bytes_per_request"`
	PeakRSSMiB                 float64   `json:"peak_rss_mib"` // VmHWM: the process's largest resident set
	RSSStartMiB                float64   `json:"rss_start_mib"`
	RSSEndMiB                  float64   `json:"rss_end_mib"`
	RSSSamplesMiB              []float64 `json:"rss_samples_mib,omitempty"`
	Threads                    int       `json:"threads"`
	ServerRequestsPerCPUSecond float64   `json:"requests_per_cpu_s"`
	// The Go runtime's share of the memory at the start and the end: the
	// heap in use, and all it holds from the system (the rest of the
	// resident set is SQLite's pages and caches and the binary).
	GoHeapStartMiB float64 `json:"go_heap_start_mib"`
	GoHeapEndMiB   float64 `json:"go_heap_end_mib"`
	GoSysStartMiB  float64 `json:"go_sys_start_mib"`
	GoSysEndMiB    float64 `json:"go_sys_end_mib"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(b int64) float64        { return float64(b) / (1 << 20) }

func (r *Report) fill(t *tally, elapsed time.Duration) {
	secs := elapsed.Seconds()
	var n int64
	for _, v := range t.statuses {
		n += v
	}
	r.Requests = n
	r.OK = t.ok
	r.NotOK = n - t.ok
	r.Deliveries = t.delivered
	r.RequestsPerSec = float64(n) / secs
	r.OKPerSec = float64(t.ok) / secs
	r.DeliveriesPerSec = float64(t.delivered) / secs
	r.Statuses = t.statuses
	r.FirstProblem = t.firstErr
	h := &t.latency
	r.Latency = Latency{
		P50: ms(h.Quantile(.50)), P90: ms(h.Quantile(.90)), P95: ms(h.Quantile(.95)), P99: ms(h.Quantile(.99)),
		P999: ms(h.Quantile(.999)), Max: ms(h.Max()), Mean: ms(h.Mean()),
	}
}

func serverFigures(before, after procSample, rss []float64, r *Report) *ServerFigures {
	f := &ServerFigures{
		CPUSeconds:     (after.CPU - before.CPU).Seconds(),
		PeakRSSMiB:     mib(after.PeakRSS),
		RSSStartMiB:    mib(before.RSS),
		RSSEndMiB:      mib(after.RSS),
		RSSSamplesMiB:  rss,
		Threads:        after.Threads,
		GoHeapStartMiB: before.HeapInuse / (1 << 20),
		GoHeapEndMiB:   after.HeapInuse / (1 << 20),
		GoSysStartMiB:  before.GoSys / (1 << 20),
		GoSysEndMiB:    after.GoSys / (1 << 20),
	}
	if secs := after.At.Sub(before.At).Seconds(); secs > 0 {
		f.CPUCores = f.CPUSeconds / secs
	}
	if r.Requests > 0 {
		f.CPUPerRequestUs = f.CPUSeconds * 1e6 / float64(r.Requests)
		f.AllocsPerRequest = (after.Mallocs - before.Mallocs) / float64(r.Requests)
		f.AllocBytesPerReq = (after.AllocBytes - before.AllocBytes) / float64(r.Requests)
	}
	if r.Deliveries > 0 && r.Scenario != Single {
		f.AllocsPerDelivery = (after.Mallocs - before.Mallocs) / float64(r.Deliveries)
	}
	if f.CPUSeconds > 0 {
		f.ServerRequestsPerCPUSecond = float64(r.Requests) / f.CPUSeconds
	}
	return f
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) {
	mode := "closed loop"
	if r.Rate > 0 {
		mode = fmt.Sprintf("open loop at %.0f req/s (latency from the intended send time)", r.Rate)
	}
	fmt.Fprintf(w, "herald bench: %s on %s, %d workers, %s, %.0fs measured after %.0fs warmup\n",
		r.Scenario, r.Server, r.Concurrency, mode, r.DurationSec, r.WarmupSec)
	if r.Server == "probe" {
		fmt.Fprint(w, "  the ceiling: one PostgreSQL INSERT (its own transaction) and one Redis LPUSH per request, answered by this process")
		if r.PGAsyncCommit {
			fmt.Fprint(w, ", synchronous_commit off (NOT DURABLE)")
		}
		fmt.Fprintln(w)
	} else if r.Server != "url" {
		switch {
		case r.WorkerNodes > 0:
			fmt.Fprintf(w, "  server: %d API nodes and %d worker nodes of %d workers", r.Nodes, r.WorkerNodes, r.Workers)
		case r.Nodes > 1:
			fmt.Fprintf(w, "  server: %d nodes of %d workers", r.Nodes, r.Workers)
		default:
			fmt.Fprintf(w, "  server: %d workers", r.Workers)
		}
		fmt.Fprintf(w, ", platform latency %s, batch size %d", fmtMs(r.PlatformLatencyMs), r.BatchSize)
		if r.SyncWaitMs > 0 {
			fmt.Fprintf(w, ", sync wait %s", fmtMs(r.SyncWaitMs))
		}
		if r.Points {
			fmt.Fprint(w, ", points on")
		}
		if r.NodeProcs > 0 {
			fmt.Fprintf(w, ", GOMAXPROCS %d per node", r.NodeProcs)
		}
		if r.PGAsyncCommit {
			fmt.Fprint(w, ", PostgreSQL synchronous_commit off (NOT DURABLE: a bench setting)")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n  requests     %10d   %10.0f /s\n", r.Requests, r.RequestsPerSec)
	fmt.Fprintf(w, "  ok           %10d   %10.0f /s\n", r.OK, r.OKPerSec)
	fmt.Fprintf(w, "  deliveries   %10d   %10.0f /s\n", r.Deliveries, r.DeliveriesPerSec)
	l := r.Latency
	fmt.Fprintf(w, "\n  latency      p50 %s   p90 %s   p95 %s   p99 %s   p99.9 %s   max %s\n",
		fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P95), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.Max))
	keys := make([]string, 0, len(r.Statuses))
	for k := range r.Statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+": "+strconv.FormatInt(r.Statuses[k], 10))
	}
	fmt.Fprintf(w, "  answers      %s   (not ok: %d)\n", strings.Join(parts, ", "), r.NotOK)
	if r.FirstProblem != "" {
		fmt.Fprintf(w, "  first problem: %s\n", r.FirstProblem)
	}
	fmt.Fprintf(w, "\n  load CPU     %.2f s (this process: the load and the fake platform), %.0f µs per request\n", r.LoadCPUSeconds, r.LoadCPUPerRequestUs)
	if f := r.ServerFigures; f != nil {
		fmt.Fprintf(w, "  server CPU   %.2f s (%.2f cores), %.0f µs per request, %.0f requests per CPU second\n",
			f.CPUSeconds, f.CPUCores, f.CPUPerRequestUs, f.ServerRequestsPerCPUSecond)
		fmt.Fprintf(w, "  allocations  %.0f per request (%.0f bytes)", f.AllocsPerRequest, f.AllocBytesPerReq)
		if f.AllocsPerDelivery > 0 {
			fmt.Fprintf(w, ", %.0f per delivery", f.AllocsPerDelivery)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  memory       peak RSS %.1f MiB; RSS %.1f MiB at the start, %.1f MiB at the end; %d threads\n",
			f.PeakRSSMiB, f.RSSStartMiB, f.RSSEndMiB, f.Threads)
		fmt.Fprintf(w, "               Go heap in use %.1f → %.1f MiB; Go runtime total %.1f → %.1f MiB\n",
			f.GoHeapStartMiB, f.GoHeapEndMiB, f.GoSysStartMiB, f.GoSysEndMiB)
	}
	if r.Costs != nil {
		var b strings.Builder
		r.Costs.write(&b)
		fmt.Fprint(w, b.String())
	}
	for _, p := range r.Profiles {
		fmt.Fprintf(w, "  profile      %s\n", p)
	}
	if r.Probe != nil {
		fmt.Fprintln(w)
		r.Probe.WriteText(w)
	}
}

func fmtMs(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 100:
		return fmt.Sprintf("%.2fms", v)
	}
	return fmt.Sprintf("%.0fms", v)
}
