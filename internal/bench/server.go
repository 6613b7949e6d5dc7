package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is an embedded herald serve (or herald worker) child process:
// its CPU time, memory and allocations are its own, apart from the load
// generator's.
type Server struct {
	cmd *exec.Cmd
	// URL is the API's base URL, ending in /api ("" for herald worker,
	// which takes no sends).
	URL string
	// Root is the server's root URL (/metrics lives there): for herald
	// worker, its --ops-addr listener.
	Root string
	// Pprof is the base URL of the runtime profiles, when served.
	Pprof string

	done    chan struct{}
	waitErr error
	log     *os.File
	client  *http.Client
}

// startServer runs `bin serve --addr 127.0.0.1:0 args…` in the
// environment env (nil: this process's) with its log in logPath and waits
// until it listens.
func startServer(ctx context.Context, bin string, args, env []string, logPath string) (*Server, error) {
	return startProcess(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), env, logPath)
}

// startWorker runs `bin worker --ops-addr 127.0.0.1:0 args…` as
// startServer runs serve and waits until it runs.
func startWorker(ctx context.Context, bin string, args, env []string, logPath string) (*Server, error) {
	return startProcess(ctx, bin, append([]string{"worker", "--ops-addr", "127.0.0.1:0"}, args...), env, logPath)
}

// workerReady is the line herald worker prints once it works jobs.
const workerReady = "herald worker running"

func startProcess(ctx context.Context, bin string, args, env []string, logPath string) (*Server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	name := "herald " + args[0]
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), log: logf, client: &http.Client{Timeout: 10 * time.Minute}}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for ready := false; !ready; {
		select {
		case line, ok := <-lines:
			if !ok {
				<-s.done
				return nil, fmt.Errorf("%s exited before it was ready (%v): %s", name, s.waitErr, s.logTail())
			}
			ready = strings.HasPrefix(line, workerReady)
			if u, ok := strings.CutPrefix(line, "herald pprof on "); ok {
				s.Pprof = strings.TrimSpace(u)
			}
			if u, ok := strings.CutPrefix(line, "herald worker listening on "); ok {
				s.Root = strings.TrimSpace(u)
			}
			if u, ok := strings.CutPrefix(line, "herald listening on "); ok {
				s.URL = strings.TrimSpace(u)
				s.Root = strings.TrimSuffix(s.URL, "/api")
				ready = true
			}
		case <-deadline.C:
			s.Kill()
			return nil, fmt.Errorf("%s was not ready within 60 s: %s", name, s.logTail())
		case <-ctx.Done():
			s.Kill()
			return nil, ctx.Err()
		}
	}
	return s, nil
}

// logTail returns the end of the server's log, for error messages.
func (s *Server) logTail() string {
	data, err := os.ReadFile(s.log.Name())
	if err != nil {
		return ""
	}
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(data)
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop ends the server with SIGTERM (a graceful drain), then SIGKILL
// after timeout.
func (s *Server) Stop(timeout time.Duration) error {
	defer s.log.Close()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(timeout):
		s.Kill()
		return fmt.Errorf("%s did not stop within %s of SIGTERM", strings.Join(s.cmd.Args[:2], " "), timeout)
	}
}

// Kill ends the server at once.
func (s *Server) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Exited reports whether the server has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// procSample is what /proc tells of a process at one moment.
type procSample struct {
	At         time.Time
	CPU        time.Duration // user + system time so far
	RSS        int64         // resident set, bytes
	PeakRSS    int64         // VmHWM: the largest resident set so far, bytes
	Threads    int
	Mallocs    float64 // Go heap objects allocated so far
	AllocBytes float64 // Go heap bytes allocated so far
	HeapInuse  float64 // bytes of Go heap in use
	GoSys      float64 // bytes the Go runtime holds from the system (heap, stacks, its own)
	// The server's own counts of its calls to PostgreSQL and Redis (-1:
	// not counted: SQLite, or no Redis).
	DBStatements, DBCommits, RedisCommands, RedisRoundTrips float64
}

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// readProc reads the CPU time and memory of process pid from /proc.
func readProc(pid int) (procSample, error) {
	s := procSample{At: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields are counted after its closing parenthesis.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return s, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return s, errors.New("short /proc stat")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	s.CPU = time.Duration(utime+stime) * clockTick
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fs := strings.Fields(val)
		if len(fs) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fs[0], 10, 64)
		switch name {
		case "VmRSS":
			s.RSS = n << 10
		case "VmHWM":
			s.PeakRSS = n << 10
		case "Threads":
			s.Threads = int(n)
		}
	}
	return s, nil
}

// sample reads the server's /proc figures and its Go allocation counters
// from /metrics (go_memstats_mallocs_total, go_memstats_alloc_bytes_total);
// of a process that serves no /metrics, the /proc figures only.
func (s *Server) sample(ctx context.Context) (procSample, error) {
	p, err := readProc(s.Pid())
	if err != nil {
		return p, err
	}
	p.DBStatements, p.DBCommits, p.RedisCommands, p.RedisRoundTrips = -1, -1, -1, -1
	if s.Root == "" {
		return p, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Root+"/metrics", nil)
	if err != nil {
		return p, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return p, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	var found int
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "go_memstats_mallocs_total":
			p.Mallocs, _ = strconv.ParseFloat(val, 64)
			found++
		case "go_memstats_alloc_bytes_total":
			p.AllocBytes, _ = strconv.ParseFloat(val, 64)
			found++
		case "go_memstats_heap_inuse_bytes":
			p.HeapInuse, _ = strconv.ParseFloat(val, 64)
		case "go_memstats_sys_bytes":
			p.GoSys, _ = strconv.ParseFloat(val, 64)
		case "herald_db_statements_total":
			p.DBStatements, _ = strconv.ParseFloat(val, 64)
		case "herald_db_commits_total":
			p.DBCommits, _ = strconv.ParseFloat(val, 64)
		case "herald_redis_commands_total":
			p.RedisCommands, _ = strconv.ParseFloat(val, 64)
		case "herald_redis_round_trips_total":
			p.RedisRoundTrips, _ = strconv.ParseFloat(val, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if found < 2 {
		return p, errors.New("the server's /metrics has no go_memstats_mallocs_total: allocations cannot be counted")
	}
	return p, nil
}

// fetchProfile saves the server's profile at path (relative to the pprof
// base URL, e.g. "profile?seconds=10") to file.
func (s *Server) fetchProfile(ctx context.Context, path, file string) error {
	if s.Pprof == "" {
		return errors.New("the server serves no profiles")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Pprof+path, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("GET %s: %s %s", path, resp.Status, msg)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profiles fetches the CPU and allocation profiles of the next d from the
// server into dir (cpu.pprof, allocs.pprof) and, after them, its heap
// (heap.pprof). The returned function waits for them and reports the
// first error.
func (s *Server) profiles(ctx context.Context, dir string, d time.Duration) func() error {
	secs := strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, p := range []struct{ path, file string }{
		{"profile?seconds=" + secs, "cpu.pprof"},
		{"allocs?seconds=" + secs, "allocs.pprof"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.fetchProfile(ctx, p.path, dir+"/"+p.file)
		}()
	}
	return func() error {
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return s.fetchProfile(ctx, "heap", dir+"/heap.pprof")
	}
}
