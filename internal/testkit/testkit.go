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
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/push/pushtest"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
	"github.com/heraldpush/herald/transport/console"
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

// envBackend names the environment variable that picks the default
// backend.
const envBackend = "HERALD_TEST_BACKEND"

// defaultBackend returns the backend named by HERALD_TEST_BACKEND, SQLite
// when it is unset.
func defaultBackend(tb testing.TB) Backend {
	tb.Helper()
	switch b := Backend(os.Getenv(envBackend)); b {
	case "", SQLite:
		return SQLite
	case ScaleOut:
		return ScaleOut
	default:
		tb.Fatalf("testkit: %s=%q: use %q or %q", envBackend, b, SQLite, ScaleOut)
		return ""
	}
}

// DefaultBackend returns the backend New uses unless told otherwise: the
// one HERALD_TEST_BACKEND names, SQLite when it is unset.
func DefaultBackend(tb testing.TB) Backend {
	tb.Helper()
	return defaultBackend(tb)
}

// Herald is a running Herald for one test: a node assembled as herald
// serve assembles it (see package node), on the test's backend, with its
// HTTP front on an httptest server. Its helpers take the testing.TB to
// fail per call, so that a helper used inside t.Run fails that subtest.
type Herald struct {
	Engine *push.Engine
	Store  *storage.Store
	// Queue is a *queue.Memory on SQLite and holds a *queue.Redis on
	// ScaleOut; on both, Queue.(interface{ Len() int }) counts the ids
	// waiting for a worker.
	Queue    push.Queue
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

	node    *node.Node
	server  *httptest.Server
	stopped bool

	mu       sync.Mutex
	chatSeq  int64
	contract *Contract
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
	http     func(*transport.Options)
	console  bool
}

// Option configures New.
type Option func(*config)

// WithDB uses the SQLite database at path instead of a private in-memory
// one (to test restarts on a real file). On the scale-out backend, the
// Heralds of one test given one path share a PostgreSQL schema and a Redis
// namespace.
func WithDB(path string) Option { return func(c *config) { c.db = path } }

// WithBackend picks the backend instead of defaultBackend.
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

// WithHTTP changes the HTTP front's options (its public URL, say).
func WithHTTP(f func(*transport.Options)) Option { return func(c *config) { c.http = f } }

// WithConsole serves the web console at / beside the API.
func WithConsole() Option { return func(c *config) { c.console = true } }

// WithReadyCheck adds a readiness check to GET /readyz (beside the
// database's, and Redis's on the scale-out backend).
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
		c.backend = defaultBackend(tb)
	}
	if c.telegram == nil {
		c.telegram = fake.NewTelegram(tb)
	}
	clock := &Clock{}
	h := &Herald{Clock: clock, Telegram: c.telegram, Backend: c.backend}
	nc := node.Config{
		DB:      c.db,
		Workers: c.workers,
		Limits:  c.limits,
		Points:  c.points,
		Clock:   clock,
		Platforms: platforms.Options{
			Timeout:    10 * time.Second,
			ImageAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
			NoPacing:   !c.pacing,
			Now:        clock.Now,
		},
		Logger:          c.logger,
		Metrics:         &metrics.Options{NoRuntime: true},
		HTTP:            &transport.Options{Ready: c.ready},
		Passwords:       Hasher(),
		QueueRetryDelay: 50 * time.Millisecond,
		RetryBackoff:    20 * time.Millisecond,
		Engine:          c.engine,
	}
	if c.console {
		nc.Console = &console.Options{}
	}
	if c.http != nil {
		c.http(nc.HTTP)
	}
	if c.backend == ScaleOut {
		ns := RandomName("t_")
		if c.db != ":memory:" {
			ns = schemaFor(c.db)
		}
		nc.DB = postgresSchemaURL(tb, ns)
		opt, err := redis.ParseURL(RedisURL(tb))
		if err != nil {
			tb.Fatalf("testkit: %s: %v", envRedis, err)
		}
		nc.Redis, nc.RedisNamespace, nc.QueueForwardInterval = opt, ns, 50*time.Millisecond
	}
	nc.Sealer = sealerFor(nc.DB)
	// The server's address is known before the node opens: it is the
	// public URL that webhooks are registered at.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testkit: listen: %v", err)
	}
	nc.Receivers = push.Receivers{Lease: 600 * time.Millisecond, MaxBackoff: time.Second, PublicURL: "http://" + ln.Addr().String()}
	if nc.HTTP.PublicURL == "" {
		nc.HTTP.PublicURL = nc.Receivers.PublicURL
	}
	n, err := node.Open(context.Background(), nc)
	if err != nil {
		ln.Close()
		tb.Fatalf("testkit: open node: %v", err)
	}
	h.node, h.Engine, h.Store, h.Metrics, h.API = n, n.Engine, n.Store, n.Metrics, n.API
	h.Queue = n.Queue
	if n.RedisQueue != nil {
		h.Queue = redisQueue{n.RedisQueue, tb}
	}
	h.server = httptest.NewUnstartedServer(h.API)
	h.server.Listener.Close()
	h.server.Listener = transport.EnvelopeListener(ln)
	h.server.Start()
	h.Root = h.server.URL
	h.URL = h.server.URL + transport.BasePath
	tb.Cleanup(h.Stop)
	if !c.noStart {
		if err := n.Start(context.Background()); err != nil {
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
	h.server.CloseClientConnections()
	h.server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = h.node.Stop(ctx)
	_ = h.node.Close()
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
func (h *Herald) Seed(tb testing.TB) Fixture {
	tb.Helper()
	a := h.Account(tb, "acme")
	bot := h.TelegramBot(tb, a.ID)
	return Fixture{Account: a, Key: h.Key(tb, a.ID), Bot: bot, Target: h.Target(tb, bot.ID, push.TargetUser, "")}
}

// Account creates an account.
func (h *Herald) Account(tb testing.TB, name string) push.Account {
	tb.Helper()
	a, err := h.Engine.Accounts().Create(context.Background(), push.System(), name)
	if err != nil {
		tb.Fatalf("testkit: create account: %v", err)
	}
	return a
}

// Key creates an API key for the account and returns it in plain text.
func (h *Herald) Key(tb testing.TB, accountID int64) string {
	tb.Helper()
	_, plain, err := h.Engine.Keys().Create(context.Background(), push.System(), push.KeyCreate{AccountID: accountID})
	if err != nil {
		tb.Fatalf("testkit: create key: %v", err)
	}
	return plain
}

// TelegramBot creates a Telegram bot for the account, registered with the
// fake Telegram server.
func (h *Herald) TelegramBot(tb testing.TB, accountID int64) push.Bot {
	tb.Helper()
	return h.PlatformBot(tb, accountID, "telegram", map[string]string{"token": h.Telegram.NewBot(), "api_base": h.Telegram.URL()})
}

// Target binds a target to a Telegram bot and makes its chat known to the
// fake server. An empty address picks a fresh chat id of the right sign.
func (h *Herald) Target(tb testing.TB, botID int64, tt push.TargetType, address string) push.Target {
	tb.Helper()
	if address == "" {
		h.mu.Lock()
		h.chatSeq++
		id := 100000 + h.chatSeq
		h.mu.Unlock()
		if tt == push.TargetGroup {
			id = -id
		}
		address = strconv.FormatInt(id, 10)
	}
	h.Telegram.AddChat(address)
	t, err := h.Engine.Targets().Bind(context.Background(), push.System(), push.Target{BotID: botID, Type: tt, Address: address})
	if err != nil {
		tb.Fatalf("testkit: bind target: %v", err)
	}
	return t
}

// Hasher is the testkit's password hasher: pushtest's, argon2id at a
// tiny cost, since tests sign in often.
func Hasher() push.PasswordHasher { return pushtest.Hasher() }

// Password is the password of every user the testkit makes.
const Password = "correct horse battery staple"

// User makes a user of the account with the role and Password.
func (h *Herald) User(tb testing.TB, accountID int64, email string, role push.Role) push.User {
	tb.Helper()
	u, err := h.Engine.Users().Create(context.Background(), push.System(), push.UserCreate{AccountID: accountID, Email: email, Password: Password, Role: role})
	if err != nil {
		tb.Fatalf("testkit: create user %s: %v", email, err)
	}
	return u
}

// SignIn signs a user in with Password and returns the session's token,
// the value of the session cookie.
func (h *Herald) SignIn(tb testing.TB, email string) string {
	tb.Helper()
	_, token, _, err := h.Engine.Sessions().SignIn(context.Background(), push.SignIn{Email: email, Password: Password, Address: "127.0.0.1"})
	if err != nil {
		tb.Fatalf("testkit: sign in %s: %v", email, err)
	}
	return token
}

// Cookie returns the header pair that sends a session token, for Call.
func Cookie(token string) []string { return []string{"Cookie", transport.SessionCookie + "=" + token} }

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
func (h *Herald) Call(tb testing.TB, method, path, key string, body any, header ...string) Response {
	tb.Helper()
	return call(tb, h.Contract(tb), h.URL, method, path, key, body, header...)
}

// CallRoot is Call for paths outside /api (/healthz, /readyz, /metrics).
func (h *Herald) CallRoot(tb testing.TB, method, path string, header ...string) Response {
	tb.Helper()
	return call(tb, h.Contract(tb), h.Root, method, path, "", nil, header...)
}

// Contract returns the server's OpenAPI document, loaded on first use.
func (h *Herald) Contract(tb testing.TB) *Contract {
	tb.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.contract == nil {
		c, err := LoadContract(h.API.OpenAPI())
		if err != nil {
			tb.Fatalf("testkit: %v", err)
		}
		h.contract = c
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
func (h *Herald) WaitJob(tb testing.TB, id string, want push.State, timeout time.Duration) push.Job {
	tb.Helper()
	j := h.Settled(tb, id, timeout)
	if j.State != want {
		tb.Fatalf("testkit: job %s settled %s, want %s (error %q)", id, j.State, want, j.Error)
	}
	return j
}

// Balance returns an account's points.
func (h *Herald) Balance(tb testing.TB, accountID int64) int64 {
	tb.Helper()
	a, err := h.Engine.Accounts().Get(context.Background(), push.System(), accountID)
	if err != nil {
		tb.Fatalf("testkit: account %d: %v", accountID, err)
	}
	return a.Points
}

// CountJobs returns the number of jobs in the database.
func (h *Herald) CountJobs(tb testing.TB) int {
	tb.Helper()
	n, err := h.Store.DB().NewSelect().Table("jobs").Count(context.Background())
	if err != nil {
		tb.Fatalf("testkit: count jobs: %v", err)
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
