package testkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildHerald builds the herald binary into dir and returns its path.
// Test packages call it once, from TestMain, and share the binary.
func BuildHerald(dir string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(dir, "herald")
	// -buildvcs=auto: stamp the VCS revision (herald version reports it)
	// even where GOFLAGS turns it off.
	cmd := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "./cmd/herald")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build herald: %w\n%s", err, out)
	}
	return bin, nil
}

// Process is a running herald command.
type Process struct {
	Cmd *exec.Cmd
	// URL is the API's base URL, ending in /api (for serve).
	URL string
	// Ops is the root URL of a herald worker's --ops-addr listener
	// (/healthz, /readyz, /metrics), when it has one.
	Ops string

	mu       sync.Mutex
	output   bytes.Buffer // stdout and stderr, interleaved
	done     chan struct{}
	err      error
	contract *Contract
}

// Call sends a request to the served API like Herald.Call (path relative
// to /api), and checks the answer against the OpenAPI document the
// process serves.
func (p *Process) Call(tb testing.TB, method, path, key string, body any, header ...string) Response {
	tb.Helper()
	return call(tb, p.Contract(tb), p.URL, method, path, key, body, header...)
}

// CallRoot is Call for paths outside /api (/healthz, /readyz, /metrics).
func (p *Process) CallRoot(tb testing.TB, method, path string, header ...string) Response {
	tb.Helper()
	return call(tb, p.Contract(tb), strings.TrimSuffix(p.URL, "/api"), method, path, "", nil, header...)
}

// Contract returns the OpenAPI document the process serves, fetched on
// first use.
func (p *Process) Contract(tb testing.TB) *Contract {
	tb.Helper()
	p.mu.Lock()
	c := p.contract
	p.mu.Unlock()
	if c != nil {
		return c
	}
	r := Call(tb, p.URL, "GET", "/openapi.json", "", nil)
	if r.Status != 200 {
		tb.Fatalf("GET /api/openapi.json: %d %s", r.Status, r.Body)
	}
	c, err := LoadContract(r.Body)
	if err != nil {
		tb.Fatalf("testkit: %v", err)
	}
	p.mu.Lock()
	p.contract = c
	p.mu.Unlock()
	return c
}

// Output returns what the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

type lockedWriter struct{ p *Process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.output.Write(b)
}

// StartServe runs `herald serve --addr 127.0.0.1:0 args…` with the extra
// environment and waits until it listens. It is killed when the test ends.
func StartServe(tb testing.TB, bin string, env []string, args ...string) *Process {
	tb.Helper()
	p := startProcess(tb, bin, env, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	p.URL = p.waitFor(tb, "herald listening on ")
	return p
}

// StartWorker runs `herald worker args…` with the extra environment and
// waits until its workers run. It is killed when the test ends.
func StartWorker(tb testing.TB, bin string, env []string, args ...string) *Process {
	tb.Helper()
	p := startProcess(tb, bin, env, append([]string{"worker"}, args...)...)
	p.waitFor(tb, "herald worker running")
	if out := p.Output(); strings.Contains(out, "herald worker listening on ") {
		p.Ops = p.waitFor(tb, "herald worker listening on ")
	}
	return p
}

// waitFor waits until the process prints a line starting with marker and
// returns the rest of that line.
func (p *Process) waitFor(tb testing.TB, marker string) string {
	tb.Helper()
	deadline := time.After(30 * time.Second)
	for {
		out := p.Output()
		if i := strings.Index(out, marker); i >= 0 {
			line := out[i+len(marker):]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				return strings.TrimSpace(line[:j])
			}
		}
		select {
		case <-p.done:
			tb.Fatalf("herald %s exited before printing %q (%v):\n%s", p.Cmd.Args[1], marker, p.err, p.Output())
		case <-deadline:
			tb.Fatalf("herald %s did not print %q within 30s:\n%s", p.Cmd.Args[1], marker, p.Output())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func startProcess(tb testing.TB, bin string, env []string, args ...string) *Process {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout = lockedWriter{p}
	cmd.Stderr = lockedWriter{p}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	tb.Cleanup(func() {
		p.Kill()
		if tb.Failed() {
			tb.Logf("herald %s output:\n%s", args[0], p.Output())
		}
	})
	return p
}

// Kill ends the process with SIGKILL and waits for it.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Terminate sends SIGTERM and waits up to timeout for the process to exit,
// returning its exit error (nil for exit code 0).
func (p *Process) Terminate(timeout time.Duration) error {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("did not exit within %s of SIGTERM", timeout)
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// AdminResult is the outcome of one herald admin command.
type AdminResult struct {
	Code   int
	Stdout string
	Stderr string
}

// JSON decodes the command's output object.
func (r AdminResult) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		tb.Fatalf("admin output %q is not one JSON object: %v (stderr %q)", r.Stdout, err, r.Stderr)
	}
	return m
}

// Admin runs `herald admin args…` with the extra environment. A SQLite
// database (--db or HERALD_DB) that is not there yet is first created with
// `herald migrate`, as an operator does: admin refuses a missing file.
func Admin(tb testing.TB, bin string, env []string, args ...string) AdminResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if db := adminDB(env, args); db != "" && db != ":memory:" && !strings.Contains(db, "://") {
		// herald admin refuses a SQLite file that is not there; an
		// operator creates it with herald migrate (or serve) first.
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			if out, err := exec.CommandContext(ctx, bin, "migrate", "--db", db).CombinedOutput(); err != nil {
				tb.Fatalf("herald migrate --db %s: %v\n%s", db, err, out)
			}
		}
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"admin"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		tb.Fatalf("herald admin %v: %v", args, err)
	}
	return AdminResult{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// MustAdmin runs an admin command that must succeed and returns its object.
func MustAdmin(tb testing.TB, bin string, env []string, args ...string) map[string]any {
	tb.Helper()
	r := Admin(tb, bin, env, args...)
	if r.Code != 0 {
		tb.Fatalf("herald admin %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return r.JSON(tb)
}

// Lines splits output into lines (for scanning logs).
func Lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

var _ io.Writer = lockedWriter{}

// adminDB is the --db an admin command works on: its --db flag, else
// HERALD_DB in env ("" when neither is given).
func adminDB(env, args []string) string {
	for i, a := range args {
		if a == "--db" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--db="); ok {
			return v
		}
	}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HERALD_DB="); ok {
			return v
		}
	}
	return ""
}
