package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for schema setup
)

// The test services. scripts/test starts a throwaway PostgreSQL cluster and
// a Redis server on loopback and exports their URLs in these variables.
const (
	envPostgres = "HERALD_TEST_POSTGRES"
	envRedis    = "HERALD_TEST_REDIS"
)

// needService returns the URL in the environment variable env. Without it
// the test is skipped, or fails when CI is set: a CI whose services did not
// start must not pass by running nothing.
func needService(tb testing.TB, env, what string) string {
	tb.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is not set in CI: %s tests cannot run (scripts/test starts %s and sets it)", env, what, what)
		}
		tb.Skipf("%s is not set: skipping the %s tests (scripts/test starts %s and sets it)", env, what, what)
	}
	return v
}

// RandomName returns prefix followed by 16 random hex digits: a name for a
// test's private schema, Redis namespace or database.
func RandomName(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// PostgresURL returns the URL of a new, empty schema in the test
// PostgreSQL database, dropped when the test ends, so that tests can run
// in parallel.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	return postgresSchemaURL(tb, RandomName("t_"))
}

// postgresSchemaURL returns the URL of the schema name in the test
// PostgreSQL database, creating it if needed; the schema is dropped when
// the test ends. Two calls with one name share one database (a restart on
// the same data).
func postgresSchemaURL(tb testing.TB, name string) string {
	tb.Helper()
	base := needService(tb, envPostgres, "PostgreSQL")
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("testkit: %s is not a URL: %v", envPostgres, err)
	}
	pgExec(tb, base, fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %q`, name))
	tb.Cleanup(func() { pgExec(tb, base, fmt.Sprintf(`DROP SCHEMA IF EXISTS %q CASCADE`, name)) })
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// schemaFor maps a path to a schema name, so that a test that restarts
// Herald on "the same file" gets the same PostgreSQL schema.
func schemaFor(path string) string {
	sum := sha256.Sum256([]byte(path))
	return "t_" + hex.EncodeToString(sum[:8])
}

// pgExec runs one statement on the test database.
func pgExec(tb testing.TB, dsn, stmt string) {
	tb.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatalf("testkit: open PostgreSQL: %v", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		tb.Fatalf("testkit: %s: %v", stmt, err)
	}
}

// RedisURL returns the URL of the test Redis server. Tests that share it
// keep apart through a namespace of their own (see RandomName); a test that
// must flush Redis starts its own server (StartRedisServer).
func RedisURL(tb testing.TB) string {
	tb.Helper()
	return needService(tb, envRedis, "Redis")
}

// StartRedisServer starts a private redis-server on a free loopback port,
// stopped when the test ends, and returns its URL. It needs the
// redis-server program (scripts/test installs it) and the test services
// (it is skipped without them, like every Redis test).
func StartRedisServer(tb testing.TB) string {
	tb.Helper()
	return StartRedisProcess(tb).URL()
}

// RedisServer is a private redis-server of one test, which the test may
// stop (an outage) without touching the shared one.
type RedisServer struct {
	cmd    *exec.Cmd
	addr   string
	exited chan struct{}
}

// StartRedisProcess is StartRedisServer, returning the server for the
// test to stop.
func StartRedisProcess(tb testing.TB) *RedisServer {
	tb.Helper()
	RedisURL(tb)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("testkit: redis-server is not installed: %v", err)
	}
	port := freePort(tb)
	dir := tb.TempDir()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		tb.Fatalf("testkit: start redis-server: %v", err)
	}
	s := &RedisServer{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	tb.Cleanup(s.Stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			tb.Fatalf("testkit: redis-server did not listen on %s:\n%s", s.addr, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

// URL is the server's URL.
func (s *RedisServer) URL() string { return "redis://" + s.addr + "/0" }

// Stop kills the server (an outage: its port then refuses connections)
// and waits until it has exited.
func (s *RedisServer) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testkit: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// HostPort returns the host:port of a service URL.
func HostPort(tb testing.TB, serviceURL string) string {
	tb.Helper()
	u, err := url.Parse(serviceURL)
	if err != nil || u.Host == "" {
		tb.Fatalf("testkit: %q is not a service URL", serviceURL)
	}
	return u.Host
}

// WithHost returns serviceURL with its host:port replaced (to go through a
// Proxy).
func WithHost(tb testing.TB, serviceURL, hostPort string) string {
	tb.Helper()
	u, err := url.Parse(serviceURL)
	if err != nil {
		tb.Fatalf("testkit: %q is not a service URL", serviceURL)
	}
	u.Host = hostPort
	return u.String()
}
