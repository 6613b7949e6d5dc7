package testkit

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumStarts is how often Chromium is started before a test gives up:
// on a loaded machine it now and then exits before it listens ("chrome
// failed to start", its output only the usual complaints).
const chromiumStarts = 3

// Chromium starts Debian's headless Chromium with the flags this machine
// needs and a fresh profile, opens a blank tab and returns its context,
// which ends after timeout or with the test. Without Chromium the test
// skips locally and fails in CI (CI set), where scripts/test installs it.
func Chromium(tb testing.TB, timeout time.Duration) context.Context {
	tb.Helper()
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		if os.Getenv("CI") != "" {
			tb.Fatal("chromium is not installed (scripts/test installs Debian's chromium)")
		}
		tb.Skip("chromium is not installed; apt-get install chromium (CI fails here instead of skipping)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	for attempt := 1; ; attempt++ {
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(tb.TempDir()))...)
		tctx, cancelTab := chromedp.NewContext(actx)
		ctx, cancel := context.WithTimeout(tctx, timeout)
		err := chromedp.Do(ctx, chromedp.Navigate("about:blank"))
		if err == nil {
			tb.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
			return ctx
		}
		cancel()
		cancelTab()
		cancelAlloc()
		if attempt == chromiumStarts {
			tb.Fatalf("start chromium (%d attempts): %v", attempt, err)
		}
		tb.Logf("start chromium, attempt %d: %v", attempt, err)
	}
}
