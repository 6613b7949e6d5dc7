package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/heraldpush/herald/internal/buildinfo"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
	"github.com/heraldpush/herald/transport/console"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve")
	var nf nodeFlags
	nf.register(fs, "jobs sent at once (0: API only, with --redis)")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	tlsCert := fs.String("tls-cert", "", "PEM certificate chain: serve HTTPS (with --tls-key); without it, serve HTTP behind a TLS-terminating proxy")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	signup := fs.String("signup", string(push.SignUpClosed), "who may make an account by signing up: closed (operators make accounts and users), invite (with a one-time code) or open")
	sessionIdle := fs.Duration("session-idle", 24*time.Hour, "a signed-in session unused this long ends")
	withConsole := fs.Bool("console", true, "serve the web console at / (the API stays under /api); --console=false serves the API alone")
	sessionMax := fs.Duration("session-max", 30*24*time.Hour, "a signed-in session ends this long after the sign-in, however used")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	switch {
	case (*tlsCert == "") != (*tlsKey == ""):
		return errors.New("--tls-cert and --tls-key go together: give both to serve HTTPS, or neither")
	case nf.workers < 0:
		return errors.New("--workers cannot be negative")
	case nf.workers == 0 && nf.redis == "":
		return errors.New("--workers 0 (API only) needs --redis: with the embedded queue no other process works the jobs; give --workers 1 or more")
	case !push.SignUpMode(*signup).Valid():
		return fmt.Errorf("--signup %q: use closed, invite or open", *signup)
	case *sessionIdle < time.Minute || *sessionMax < *sessionIdle:
		return errors.New("--session-idle must be at least 1m, and --session-max at least --session-idle")
	}
	public, err := nf.public()
	if err != nil {
		return err
	}
	// The certificate is read before the node opens: a bad one stops serve
	// before the engine starts.
	var tlsConf *tls.Config
	if *tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	// One server per SQLite database: a second would take the first
	// one's running jobs for abandoned ones.
	unlock, err := lockSQLite(nf.db)
	if err != nil {
		return err
	}
	defer unlock()
	build := buildinfo.Read(version)
	var consoleOpts *console.Options
	if *withConsole {
		consoleOpts = &console.Options{}
	}
	n, closeNode, log, err := nf.open(ctx, stdout, stderr, nodeParts{
		http:     &transport.Options{Version: build.Version, PublicURL: public},
		metrics:  &metrics.Options{Build: metrics.Build{Version: build.Version, Revision: build.Revision, GoVersion: build.GoVersion}},
		sessions: push.Sessions{Idle: *sessionIdle, Max: *sessionMax, SignUp: push.SignUpMode(*signup)},
		console:  consoleOpts,
		createDB: true,
	})
	if err != nil {
		return err
	}
	defer closeNode()
	if err := n.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = n.Stop(context.Background())
		return err
	}
	srv := transport.NewHTTPServer(*addr, n.API, nf.syncWait)
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	scheme := "http"
	if tlsConf != nil {
		srv.TLSConfig = tlsConf
		ln = tls.NewListener(ln, tlsConf)
		scheme = "https"
	} else {
		// net/http's own answers (an over-long or malformed header) in
		// the API's error envelope; over TLS the handler's header limit
		// answers most of them.
		ln = transport.EnvelopeListener(ln)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := scheme + "://" + ln.Addr().String()
	consoleURL := "off"
	if *withConsole {
		consoleURL = base + "/"
	}
	log.Info("herald serving", "addr", ln.Addr().String(), "docs", base+"/api/docs", "console", consoleURL,
		"db", storage.Redact(nf.db), "redis", redactRedis(nf.redis),
		"workers", nf.workers, "points", nf.points, "rate_limit", nf.rateLimit, "sync_wait", nf.syncWait)
	fmt.Fprintf(stdout, "herald listening on %s/api\n", base)

	select {
	case err := <-served:
		_ = n.Stop(context.Background())
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	// Drain: new sends get 503 while the listener stays open; running
	// sends get until the drain timeout; queued jobs stay for the next start.
	n.Engine.Drain()
	nf.stop(n, log, "sends still running at the drain timeout were stopped; they become uncertain at the next start")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate")
	db := fs.String("db", "herald.db", "database: a SQLite file path or a PostgreSQL URL")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	if err := checkDB(*db); err != nil {
		return err
	}
	if err := prepareSQLite(*db, true, slog.New(slog.NewTextHandler(stderr, nil))); err != nil {
		return err
	}
	store, err := storage.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	status, err := store.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]any{"db": storage.Redact(*db), "migrations": status})
}
