// Package testkit runs a whole Herald in a test: the engine on SQLite (in
// memory by default) and the in-process queue, or on PostgreSQL and Redis
// (the scale-out backend, see Backend), the built-in platforms, fake
// platform servers on loopback, and the HTTP front on an httptest server,
// with helpers to seed accounts, keys, bots and targets and to call the
// API.
package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/cluster"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
	"github.com/redis/go-redis/v9"
)

// Backend is what a Herald runs on.
type Backend string

// The backends. The engine and HTTP suites run on both: SQLite by default,
// the scale-out backend when HERALD_TEST_BACKEND=scaleout (scripts/test
// runs them a second time so).
const (
	// SQLite: SQLite (in memory, or the file of WithDB) and the in-process
	// queue, as embedded Herald runs.
	SQLite Backend = "sqlite"
	// ScaleOut: PostgreSQL (a schema of its own in HERALD_TEST_POSTGRES)
	// and Redis (HERALD_TEST_REDIS, a namespace of its own): the asynq
	// queue, completion notices over pub/sub and the rate limit in Redis,
	// with push.Options.Shared, as `herald serve --db postgres://…
	// --redis redis://…` runs.
	ScaleOut Backend = "scaleout"
)

// EnvBackend names the environment variable that picks the default
// backend.
const EnvBackend = "HERALD_TEST_BACKEND"

// DefaultBackend returns the backend named by HERALD_TEST_BACKEND, SQLite
// when it is unset.
func DefaultBackend(tb testing.TB) Backend {
	tb.Helper()
	switch b := Backend(os.Getenv(EnvBackend)); b {
	case "", SQLite:
		return SQLite
	case ScaleOut:
		return ScaleOut
	default:
		tb.Fatalf("testkit: %s=%q: use %q or %q", EnvBackend, b, SQLite, ScaleOut)
		return ""
	}
}

// Herald is a running Herald for one test.
type Herald struct {
	T      testing.TB
	Engine *push.Engine
	Store  *storage.Store
	// Queue is a *queue.Memory on SQLite and holds a *queue.Redis on
	// ScaleOut; on both, Queue.(interface{ Len() int }) counts the ids
	// waiting for a worker.
	Queue    push.Queue
	Server   *httptest.Server
	Backend  Backend
	Clock    *Clock
	Telegram *fake.Telegram
	// Metrics observes the engine and the HTTP front; GET /metrics serves it.
	Metrics *metrics.Metrics
	// API is the HTTP front.
	API *transport.Server
	// URL is the API's base URL, ending in /api.
	URL string
	// Root is the server's root URL (the probes and /metrics live there).
	Root string

	stopped bool
	chatSeq int64
	closers []func() error // after the store: Redis subscribers and clients

	contractOnce sync.Once
	contract     *Contract
}

type config struct {
	backend  Backend
	db       string
	workers  int
	limits   push.Limits
	points   push.Points
	engine   func(*push.Options)
	telegram *fake.Telegram
	noStart  bool
	logger   *slog.Logger
	pacing   bool
	ready    []transport.ReadyCheck
}

// Option configures New.
type Option func(*config)

// WithDB uses the SQLite database at path instead of a private in-memory
// one (to test restarts on a real file). On the scale-out backend, the
// Heralds of one test given one path share a PostgreSQL schema and a Redis
// namespace.
func WithDB(path string) Option { return func(c *config) { c.db = path } }

// WithBackend picks the backend instead of DefaultBackend.
func WithBackend(b Backend) Option { return func(c *config) { c.backend = b } }

// WithWorkers sets the number of queue workers (default 4).
func WithWorkers(n int) Option { return func(c *config) { c.workers = n } }

// WithLimits sets the engine's limits; zero fields keep the defaults.
func WithLimits(l push.Limits) Option { return func(c *config) { c.limits = l } }

// WithPoints sets the points policy.
func WithPoints(p push.Points) Option { return func(c *config) { c.points = p } }

// WithEngineOptions lets a test change any engine option before New.
func WithEngineOptions(f func(*push.Options)) Option { return func(c *config) { c.engine = f } }

// WithTelegram shares a fake Telegram server (for example with a Herald
// started earlier on the same database).
func WithTelegram(f *fake.Telegram) Option { return func(c *config) { c.telegram = f } }

// WithoutStart builds the engine but does not start its workers.
func WithoutStart() Option { return func(c *config) { c.noStart = true } }

// WithPacing turns on the spacing of sends by platform limits (off in the
// testkit by default, so that tests can send bursts to one chat).
func WithPacing() Option { return func(c *config) { c.pacing = true } }

// WithLogger sends the engine's and the HTTP front's logs to l.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithReadyCheck adds a readiness check to GET /readyz (beside the
// database's).
func WithReadyCheck(rc transport.ReadyCheck) Option {
	return func(c *config) { c.ready = append(c.ready, rc) }
}

// New starts a Herald that stops when the test ends.
func New(tb testing.TB, opts ...Option) *Herald {
	tb.Helper()
	c := config{db: ":memory:", workers: 4}
	for _, o := range opts {
		o(&c)
	}
	if c.backend == "" {
		c.backend = DefaultBackend(tb)
	}
	ctx := context.Background()
	if c.telegram == nil {
		c.telegram = fake.NewTelegram(tb)
	}
	logger := c.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	clock := &Clock{}
	m := metrics.New(metrics.Options{Logger: logger, NoRuntime: true})
	h := &Herald{T: tb, Clock: clock, Telegram: c.telegram, Backend: c.backend, Metrics: m}
	po := push.Options{
		Platforms: platforms.Builtin(platforms.Options{
			Timeout:    10 * time.Second,
			ImageAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
			NoPacing:   !c.pacing,
			Now:        clock.Now,
		}),
		Clock:        clock,
		Logger:       logger,
		Observer:     m,
		Limits:       c.limits,
		Points:       c.points,
		RetryBackoff: 20 * time.Millisecond,
	}
	switch c.backend {
	case ScaleOut:
		h.scaleOut(&c, &po, logger)
	default:
		store, err := storage.Open(ctx, c.db, storage.WithSealer(sealerFor(c.db)))
		if err != nil {
			tb.Fatalf("testkit: open store: %v", err)
		}
		h.Store = store
		h.Queue = queue.NewMemory(queue.MemoryOptions{Workers: c.workers, Logger: logger, RetryDelay: 50 * time.Millisecond})
		po.Queue = h.Queue
	}
	po.Store = h.Store
	if c.engine != nil {
		c.engine(&po)
	}
	eng, err := push.New(po)
	if err != nil {
		h.closeBackend()
		tb.Fatalf("testkit: new engine: %v", err)
	}
	h.Engine = eng
	m.Platforms(eng.PlatformNames())
	m.WatchBacklog(h.Store, eng.PlatformNames())
	h.API = transport.New(eng, transport.Options{Logger: logger, Observer: m, Metrics: m.Handler(), Ready: c.ready})
	h.Server = httptest.NewServer(h.API)
	h.Root = h.Server.URL
	h.URL = h.Server.URL + transport.BasePath
	tb.Cleanup(h.Stop)
	if !c.noStart {
		if err := eng.Start(ctx); err != nil {
			tb.Fatalf("testkit: start engine: %v", err)
		}
	}
	return h
}

// Stop stops the HTTP server, the engine and the store. It is safe to call
// more than once.
func (h *Herald) Stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	h.Server.CloseClientConnections()
	h.Server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = h.Engine.Stop(ctx)
	h.closeBackend()
}

// scaleOut opens the scale-out backend: a PostgreSQL schema, and a Redis
// namespace for the asynq queue, the completion notices and the rate
// limit.
func (h *Herald) scaleOut(c *config, po *push.Options, logger *slog.Logger) {
	tb := h.T
	tb.Helper()
	ctx := context.Background()
	ns := RandomName("t_")
	if c.db != ":memory:" {
		ns = schemaFor(c.db)
	}
	dsn := PostgresSchemaURL(tb, ns)
	opt, err := redis.ParseURL(RedisURL(tb))
	if err != nil {
		tb.Fatalf("testkit: %s: %v", EnvRedis, err)
	}
	store, err := storage.Open(ctx, dsn, storage.WithSealer(sealerFor(dsn)))
	if err != nil {
		tb.Fatalf("testkit: open store: %v", err)
	}
	h.Store = store
	rdb := redis.NewClient(opt)
	shared := cluster.NewNode(ctx, rdb, cluster.NodeOptions{
		Namespace: ns, Logger: logger, Clock: h.Clock,
		Queue: queue.RedisOptions{Workers: c.workers, ForwardInterval: 50 * time.Millisecond, RetryDelay: 50 * time.Millisecond},
	})
	h.closers = append(h.closers, shared.Close, rdb.Close)
	shared.Apply(po)
	h.Queue = redisQueue{shared.Queue, tb}
}

// redisQueue is the scale-out queue as a test sees it: Len, as on
// *queue.Memory, without a context or an error (a failure to ask Redis
// fails the test).
type redisQueue struct {
	*queue.Redis
	tb testing.TB
}

// Len returns the number of ids waiting in Redis for a worker.
func (q redisQueue) Len() int {
	q.tb.Helper()
	n, err := q.Redis.Len(context.Background())
	if err != nil {
		q.tb.Fatalf("testkit: %v", err)
	}
	return n
}

// closeBackend closes the store and the Redis clients.
func (h *Herald) closeBackend() {
	if h.Store != nil {
		_ = h.Store.Close()
	}
	for _, c := range h.closers {
		_ = c()
	}
	h.closers = nil
}

// Fixture is a seeded account with a key, a Telegram bot and a user
// target.
type Fixture struct {
	Account push.Account
	Key     string
	Bot     push.Bot
	Target  push.Target
}

// Seed creates an account, an API key, a Telegram bot on the fake server
// and a bound user target.
func (h *Herald) Seed() Fixture {
	h.T.Helper()
	a := h.Account("acme")
	bot := h.TelegramBot(a.ID)
	return Fixture{Account: a, Key: h.Key(a.ID), Bot: bot, Target: h.Target(bot.ID, push.TargetUser, "")}
}

// Account creates an account.
func (h *Herald) Account(name string) push.Account {
	h.T.Helper()
	a, err := h.Engine.CreateAccount(context.Background(), name)
	if err != nil {
		h.T.Fatalf("testkit: create account: %v", err)
	}
	return a
}

// Key creates an API key for the account and returns it in plain text.
func (h *Herald) Key(accountID int64) string {
	h.T.Helper()
	_, plain, err := h.Engine.CreateAPIKey(context.Background(), accountID, 0)
	if err != nil {
		h.T.Fatalf("testkit: create key: %v", err)
	}
	return plain
}

// TelegramBot creates a Telegram bot for the account, registered with the
// fake Telegram server.
func (h *Herald) TelegramBot(accountID int64) push.Bot {
	h.T.Helper()
	cfg, _ := json.Marshal(map[string]string{"token": h.Telegram.NewBot(), "api_base": h.Telegram.URL()})
	b, err := h.Engine.CreateBot(context.Background(), push.Bot{AccountID: accountID, Platform: "telegram", Name: "tg", Config: cfg})
	if err != nil {
		h.T.Fatalf("testkit: create bot: %v", err)
	}
	return b
}

// Target binds a target to a Telegram bot and makes its chat known to the
// fake server. An empty address picks a fresh chat id of the right sign.
func (h *Herald) Target(botID int64, tt push.TargetType, address string) push.Target {
	h.T.Helper()
	if address == "" {
		h.chatSeq++
		id := 100000 + h.chatSeq
		if tt == push.TargetGroup {
			id = -id
		}
		address = strconv.FormatInt(id, 10)
	}
	h.Telegram.AddChat(address)
	t, err := h.Engine.BindTarget(context.Background(), push.Target{BotID: botID, Type: tt, Address: address})
	if err != nil {
		h.T.Fatalf("testkit: bind target: %v", err)
	}
	return t
}

// Response is an API answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r Response) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Decode decodes the body into v.
func (r Response) Decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("testkit: decode %s: %v", r.Body, err)
	}
}

// Call sends a request to the API: path is relative to /api, body is
// marshalled as JSON unless it is a string or []byte, and header pairs
// ("Name", "value", …) are added. The answer is checked against the
// server's OpenAPI document: a mismatch fails the test.
func (h *Herald) Call(method, path, key string, body any, header ...string) Response {
	h.T.Helper()
	return call(h.T, h.Contract(), h.URL, method, path, key, body, header...)
}

// CallRoot is Call for paths outside /api (/healthz, /readyz, /metrics).
func (h *Herald) CallRoot(method, path string, header ...string) Response {
	h.T.Helper()
	return call(h.T, h.Contract(), h.Root, method, path, "", nil, header...)
}

// Contract returns the server's OpenAPI document, loaded on first use.
func (h *Herald) Contract() *Contract {
	h.T.Helper()
	h.contractOnce.Do(func() {
		c, err := LoadContract(h.API.OpenAPI())
		if err != nil {
			h.T.Fatalf("testkit: %v", err)
		}
		h.contract = c
	})
	if h.contract == nil {
		h.T.Fatalf("testkit: the OpenAPI document did not load")
	}
	return h.contract
}

// Call sends a request to the API at base (ending in /api). It is Herald.Call
// for servers started outside the testkit, without the document check
// (Process.Call has it).
func Call(tb testing.TB, base, method, path, key string, body any, header ...string) Response {
	tb.Helper()
	return call(tb, nil, base, method, path, key, body, header...)
}

func call(tb testing.TB, contract *Contract, base, method, path, key string, body any, header ...string) Response {
	tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			tb.Fatalf("testkit: marshal body: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		tb.Fatalf("testkit: new request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("testkit: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("testkit: read answer: %v", err)
	}
	if contract != nil {
		if err := contract.Check(req, resp.StatusCode, resp.Header, data); err != nil {
			tb.Errorf("testkit: the answer to %s %s does not match the OpenAPI document: %v\nstatus %d, headers %v\n%s", method, path, err, resp.StatusCode, resp.Header, data)
		}
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// WaitJob waits up to timeout for a job to settle and fails the test
// unless it settled in state want (a settled state).
func (h *Herald) WaitJob(id string, want push.State, timeout time.Duration) push.Job {
	h.T.Helper()
	j := h.Settled(id, timeout)
	if j.State != want {
		h.T.Fatalf("testkit: job %s settled %s, want %s (error %q)", id, j.State, want, j.Error)
	}
	return j
}

// Balance returns an account's points.
func (h *Herald) Balance(accountID int64) int64 {
	h.T.Helper()
	a, err := h.Engine.Account(context.Background(), accountID)
	if err != nil {
		h.T.Fatalf("testkit: account %d: %v", accountID, err)
	}
	return a.Points
}

// CountJobs returns the number of jobs in the database.
func (h *Herald) CountJobs() int {
	h.T.Helper()
	n, err := h.Store.DB().NewSelect().Table("jobs").Count(context.Background())
	if err != nil {
		h.T.Fatalf("testkit: count jobs: %v", err)
	}
	return int(n)
}

// String describes the Herald for test logs.
func (h *Herald) String() string { return fmt.Sprintf("herald at %s", h.URL) }

// sealerFor returns the Sealer of a test database: every Herald of the
// testkit seals bot credentials, with a key derived from the database's
// name, so that a second Herald on the same database opens them.
func sealerFor(dsn string) *storage.Sealer {
	key := sha256.Sum256([]byte("herald testkit secret key for " + dsn))
	s, err := storage.NewSealer(key[:])
	if err != nil {
		panic(err)
	}
	return s
}
