package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// envPGBin names the directory of PostgreSQL's programs (initdb, pg_ctl);
// scripts/test sets it.
const envPGBin = "HERALD_TEST_PGBIN"

// PostgresServer is a private PostgreSQL cluster of one test, which the
// test may stop and start again (an outage) without touching the shared
// one.
type PostgresServer struct {
	tb   testing.TB
	bin  string
	data string
	log  string
	port int
	// settings are the server's settings beyond the test cluster's own
	// ("name=value", as -c takes them).
	settings []string
	// osUser runs the cluster's programs when the test runs as root
	// (PostgreSQL refuses to run as root).
	osUser string
}

// StartPostgresServer initializes and starts a private PostgreSQL cluster
// on a free loopback port, stopped and removed when the test ends, with
// settings beyond the test cluster's own ("name=value", as postgres -c
// takes them). It needs HERALD_TEST_PGBIN (skipped without it, like every
// PostgreSQL test).
func StartPostgresServer(tb testing.TB, settings ...string) *PostgresServer {
	tb.Helper()
	needService(tb, envPostgres, "PostgreSQL") // skips, or fails in CI, without the test services
	bin := needService(tb, envPGBin, "PostgreSQL")
	// Not tb.TempDir: its parents are private to root, where the cluster's
	// own user could not reach its files.
	dir, err := os.MkdirTemp("", "herald-pg-")
	if err != nil {
		tb.Fatalf("testkit: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	s := &PostgresServer{tb: tb, bin: bin, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log"), port: freePort(tb), settings: settings}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("testkit: running as root, a private PostgreSQL needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
		s.osUser = "postgres"
	}
	s.run("initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	s.Start()
	tb.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); err == nil {
			_ = s.command("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "-t", "30", "stop").Run()
		}
	})
	return s
}

// URL is the connection URL of the cluster's postgres database.
func (s *PostgresServer) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the cluster and waits until it accepts connections.
func (s *PostgresServer) Start() {
	s.tb.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off", s.port, filepath.Dir(s.data))
	for _, kv := range s.settings {
		opts += " -c " + kv
	}
	s.run("pg_ctl", "-D", s.data, "-l", s.log, "-w", "-t", "60", "-o", opts, "start")
}

// Stop stops the cluster as an administrator would (pg_ctl stop -m fast:
// the connections are closed, new ones refused).
func (s *PostgresServer) Stop() {
	s.tb.Helper()
	s.run("pg_ctl", "-D", s.data, "-m", "fast", "-w", "-t", "30", "stop")
}

func (s *PostgresServer) command(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, prog)
	if s.osUser != "" {
		return exec.Command("runuser", append([]string{"-u", s.osUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (s *PostgresServer) run(prog string, args ...string) {
	s.tb.Helper()
	if out, err := s.command(prog, args...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(s.log)
		s.tb.Fatalf("testkit: %s: %v\n%s\n%s", prog, err, out, log)
	}
}
