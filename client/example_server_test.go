package client_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// exampleServer is a Herald on loopback for an Example, seeded with an
// account, its API key, a Telegram bot (on a fake Telegram) and a bound
// target.
type exampleServer struct {
	url, key    string
	bot, target int64
	herald      *testkit.Herald
	tb          *exampleTB
}

// startExampleServer starts a Herald for an Example; stop ends it.
func startExampleServer(opts ...testkit.Option) *exampleServer {
	tb := &exampleTB{}
	h := testkit.New(tb, opts...)
	fx := h.Seed(tb)
	return &exampleServer{url: h.URL, key: fx.Key, bot: fx.Bot.ID, target: fx.Target.ID, herald: h, tb: tb}
}

// stop stops the server and its fakes.
func (s *exampleServer) stop() { s.tb.cleanup() }

// exampleTB is the testing.TB the testkit gets in an Example, which has
// no *testing.T: a failure panics (failing the example), and the cleanups
// run at stop. The testkit uses only the methods defined here; the
// embedded TB (nil) only completes the interface.
type exampleTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

func (e *exampleTB) Helper()                        {}
func (e *exampleTB) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (e *exampleTB) Errorf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (e *exampleTB) Cleanup(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cleanups = append(e.cleanups, f)
}

// cleanup runs the cleanups, last registered first.
func (e *exampleTB) cleanup() {
	e.mu.Lock()
	fs := e.cleanups
	e.cleanups = nil
	e.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
