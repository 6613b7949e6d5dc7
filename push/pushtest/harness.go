package pushtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/password"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
)

// waitTimeout is how long the Harness's waits (Settled, WaitSent) wait
// before they fail the test.
const waitTimeout = 10 * time.Second

// Harness is a started push.Engine on a private in-memory SQLite database
// and the in-process queue, whose only platform is a Platform. Its
// helpers take the testing.TB to fail per call, so that a helper used
// inside t.Run fails that subtest.
type Harness struct {
	// Engine is the engine under test: give it to the code that embeds
	// push, and call it to seed what the helpers do not.
	Engine *push.Engine
	// Platform receives every message the engine sends.
	Platform *Platform
	// Clock is the engine's clock: Advance moves it forward.
	Clock *Clock

	names     []string
	store     *storage.Store
	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	targets int // addresses handed out by Target
}

type config struct {
	names  []string
	engine func(*push.Options)
}

// Option configures New and Open.
type Option func(*config)

// WithPlatformNames registers the Platform under these names instead of
// PlatformName, so that code which creates bots on, say, "telegram"
// sends to it. Bot makes its bots on the first name.
func WithPlatformNames(names ...string) Option {
	return func(c *config) { c.names = names }
}

// WithEngineOptions lets the test change the engine's options (its
// Limits, Points, Logger, …) before the engine is built. The Store, Queue,
// Clock and Platforms are already set; f may replace them.
func WithEngineOptions(f func(*push.Options)) Option {
	return func(c *config) { c.engine = f }
}

// New starts a Harness that stops at the end of the test (t.Cleanup).
func New(tb testing.TB, opts ...Option) *Harness {
	tb.Helper()
	h, err := Open(context.Background(), opts...)
	if err != nil {
		tb.Fatalf("pushtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := h.Close(); err != nil {
			tb.Error(err)
		}
	})
	return h
}

// Open starts a Harness outside a test (in TestMain, an example or a
// benchmark's setup); Close stops it.
//
// The engine is assembled as a program that embeds push assembles it: a
// storage.Store on SQLite's ":memory:" (one connection, private to the
// Harness, gone when it closes), a queue.Memory with 4 workers, and the
// Platform. Retries of retryable platform errors start after 20 ms
// instead of a second, users' passwords are hashed with Hasher, and every
// other engine option has push's default.
func Open(ctx context.Context, opts ...Option) (*Harness, error) {
	c := config{names: []string{PlatformName}}
	for _, o := range opts {
		o(&c)
	}
	if len(c.names) == 0 {
		return nil, fmt.Errorf("pushtest: WithPlatformNames needs at least one name")
	}
	h := &Harness{Platform: NewPlatform(), Clock: &Clock{}, names: c.names}
	store, err := storage.Open(ctx, ":memory:")
	if err != nil {
		return nil, fmt.Errorf("pushtest: open the database: %w", err)
	}
	o := push.Options{
		Store:        store,
		Queue:        queue.NewMemory(queue.MemoryOptions{Workers: 4, RetryDelay: 50 * time.Millisecond}),
		Platforms:    make(map[string]push.Platform, len(c.names)),
		Clock:        h.Clock,
		RetryBackoff: 20 * time.Millisecond,
		Passwords:    Hasher(),
	}
	for _, name := range c.names {
		o.Platforms[name] = h.Platform
	}
	if c.engine != nil {
		c.engine(&o)
	}
	eng, err := push.New(o)
	if err != nil {
		return nil, fmt.Errorf("pushtest: build the engine: %w", errors.Join(err, store.Close()))
	}
	h.store, h.Engine = store, eng
	if err := eng.Start(ctx); err != nil {
		return nil, fmt.Errorf("pushtest: start the engine: %w", errors.Join(err, store.Close()))
	}
	return h, nil
}

// Close stops the engine and closes the database. Sends that the
// Platform delays end at once, uncertain. It is safe to call more than
// once.
func (h *Harness) Close() error {
	h.closeOnce.Do(func() {
		h.Platform.stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.closeErr = errors.Join(h.Engine.Stop(ctx), h.store.Close())
		if h.closeErr != nil {
			h.closeErr = fmt.Errorf("pushtest: close: %w", h.closeErr)
		}
	})
	return h.closeErr
}

// Fixture is what Seed makes: an account, a bot of it on the Platform and
// a user target of the bot.
type Fixture struct {
	Account push.Account
	Bot     push.Bot
	Target  push.Target
}

// Seed makes an account "acme" with 100 points, a bot and a user target.
func (h *Harness) Seed(tb testing.TB) Fixture {
	tb.Helper()
	f, err := h.Setup(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// Setup is Seed for code without a testing.TB (an example, TestMain): it
// returns what failed instead of failing the test.
func (h *Harness) Setup(ctx context.Context) (Fixture, error) {
	a, err := h.account(ctx, "acme", 100)
	if err != nil {
		return Fixture{}, err
	}
	b, err := h.bot(ctx, a.ID)
	if err != nil {
		return Fixture{}, err
	}
	t, err := h.target(ctx, b.ID, push.TargetUser, "")
	if err != nil {
		return Fixture{}, err
	}
	return Fixture{Account: a, Bot: b, Target: t}, nil
}

// Account makes an account whose balance is points. The engine charges
// sends only with push.Points.Enabled (see WithEngineOptions).
func (h *Harness) Account(tb testing.TB, name string, points int64) push.Account {
	tb.Helper()
	a, err := h.account(context.Background(), name, points)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func (h *Harness) account(ctx context.Context, name string, points int64) (push.Account, error) {
	a, err := h.Engine.Accounts().Create(ctx, push.System(), name)
	if err != nil {
		return push.Account{}, fmt.Errorf("pushtest: create account %q: %w", name, err)
	}
	if a.Points != points {
		id := a.ID
		if a, err = h.Engine.Ledger().SetBalance(ctx, push.System(), id, points); err != nil {
			return push.Account{}, fmt.Errorf("pushtest: set the balance of account %d: %w", id, err)
		}
	}
	return a, nil
}

// Bot makes a bot of the account on the Platform (on the first name of
// WithPlatformNames), with the config {}.
func (h *Harness) Bot(tb testing.TB, accountID int64) push.Bot {
	tb.Helper()
	b, err := h.bot(context.Background(), accountID)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func (h *Harness) bot(ctx context.Context, accountID int64) (push.Bot, error) {
	b, err := h.Engine.Bots().Create(ctx, push.System(), push.Bot{AccountID: accountID, Platform: h.names[0], Name: h.names[0], Config: []byte(`{}`)})
	if err != nil {
		return push.Bot{}, fmt.Errorf("pushtest: create a bot of account %d: %w", accountID, err)
	}
	return b, nil
}

// Target binds a target of type tt to the bot. An empty address picks a
// fresh one.
func (h *Harness) Target(tb testing.TB, botID int64, tt push.TargetType, address string) push.Target {
	tb.Helper()
	t, err := h.target(context.Background(), botID, tt, address)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func (h *Harness) target(ctx context.Context, botID int64, tt push.TargetType, address string) (push.Target, error) {
	if address == "" {
		h.mu.Lock()
		h.targets++
		address = string(tt) + "-" + strconv.Itoa(h.targets)
		h.mu.Unlock()
	}
	t, err := h.Engine.Targets().Bind(ctx, push.System(), push.Target{BotID: botID, Type: tt, Address: address})
	if err != nil {
		return push.Target{}, fmt.Errorf("pushtest: bind the %s target %q to bot %d: %w", tt, address, botID, err)
	}
	return t, nil
}

// Settled waits until the job is settled (neither queued nor running) and
// returns it, failing the test after 10 s.
func (h *Harness) Settled(tb testing.TB, jobID string) push.Job {
	tb.Helper()
	return Settled(tb, h.Engine, jobID, waitTimeout)
}

// WaitSent waits until the Platform received at least n messages and
// returns them all (see Platform.Wait), failing the test after 10 s.
func (h *Harness) WaitSent(tb testing.TB, n int) []Message {
	tb.Helper()
	return waitSent(tb, h.Platform, n, waitTimeout)
}

// testingT is what the helpers need of a testing.TB, so that their
// failures can be tested.
type testingT interface {
	Helper()
	Fatalf(format string, args ...any)
}

func waitSent(t testingT, p *Platform, n int, timeout time.Duration) []Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sent, err := p.Wait(ctx, n)
	if err != nil {
		t.Fatalf("pushtest: the platform received %d messages in %s, want %d: %v", len(sent), timeout, n, sent)
	}
	return sent
}

// Settled waits until the job is settled (neither queued nor running) and
// returns it, failing the test after timeout. It works on any engine, the
// Harness's or one assembled by the test.
func Settled(tb testing.TB, eng *push.Engine, jobID string, timeout time.Duration) push.Job {
	tb.Helper()
	return settled(tb, eng, jobID, timeout)
}

func settled(t testingT, eng *push.Engine, jobID string, timeout time.Duration) push.Job {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j, err := eng.Jobs().Get(context.Background(), push.System(), jobID)
		if err != nil {
			t.Fatalf("pushtest: job %s: %v", jobID, err)
			return push.Job{}
		}
		if !j.State.Pending() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("pushtest: job %s is still %s after %s", jobID, j.State, timeout)
			return j
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Hasher is the Harness's password hasher: argon2id at a tiny cost, since
// tests sign users in often. It is no hasher for a real server.
func Hasher() push.PasswordHasher {
	return password.Argon2id{Params: password.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}}
}
