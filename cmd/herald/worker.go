package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/heraldpush/herald/internal/buildinfo"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
)

// worker runs `herald worker`: the engine's workers, reconciler and
// sweeper without the HTTP API, as one node of a scale-out installation.
// With --ops-addr it answers the probes and the metrics there.
func worker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker")
	var nf nodeFlags
	nf.register(fs, "jobs sent at once")
	opsAddr := fs.String("ops-addr", "", "address to answer the probes and the metrics on (/healthz, /readyz, /metrics), e.g. 127.0.0.1:9090 (empty: none; no key guards them, so keep it on loopback or an internal network)")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	if nf.redis == "" {
		return errors.New("herald worker needs --redis and a PostgreSQL --db: it works the jobs that herald serve nodes queue in Redis (with the embedded queue, herald serve runs the workers itself)")
	}
	if nf.workers < 1 {
		return errors.New("--workers must be at least 1")
	}
	var parts nodeParts
	if *opsAddr != "" {
		build := buildinfo.Read(version)
		parts.http = &transport.Options{OperationsOnly: true, Version: build.Version}
		parts.metrics = &metrics.Options{Build: metrics.Build{Version: build.Version, Revision: build.Revision, GoVersion: build.GoVersion}}
	}
	n, closeNode, log, err := nf.open(ctx, stdout, stderr, parts)
	if err != nil {
		return err
	}
	defer closeNode()
	// The listener opens before the engine starts: an address in use stops
	// the worker before it takes any job.
	var ln net.Listener
	if *opsAddr != "" {
		if ln, err = net.Listen("tcp", *opsAddr); err != nil {
			return fmt.Errorf("--ops-addr: %w", err)
		}
		defer ln.Close()
	}
	if err := n.Start(ctx); err != nil {
		return err
	}
	served := make(chan error, 1)
	var srv *http.Server
	if ln != nil {
		srv = transport.NewHTTPServer(*opsAddr, n.API, 0)
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
		ln = transport.EnvelopeListener(ln)
		go func() { served <- srv.Serve(ln) }()
		url := "http://" + ln.Addr().String()
		log.Info("probes and metrics served", "url", url)
		fmt.Fprintf(stdout, "herald worker listening on %s\n", url)
	}
	log.Info("herald worker running", "db", storage.Redact(nf.db), "redis", redactRedis(nf.redis), "workers", nf.workers,
		"namespace", nf.redisNamespace)
	fmt.Fprintf(stdout, "herald worker running with %d workers\n", nf.workers)
	select {
	case err := <-served:
		nf.stop(n, log, "sends still running at the drain timeout were stopped; each becomes uncertain when another worker is handed it")
		return fmt.Errorf("--ops-addr: %w", err)
	case <-ctx.Done():
	}
	// While it drains, /readyz answers 503 "draining"; the listener closes
	// once the sends have ended.
	nf.stop(n, log, "sends still running at the drain timeout were stopped; each becomes uncertain when another worker is handed it")
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("ops listener shutdown", "err", err)
		}
	}
	log.Info("stopped")
	return nil
}
