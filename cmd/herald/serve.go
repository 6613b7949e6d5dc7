package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
)

// node is a running engine with its store and queue.
type node struct {
	store *storage.Store
	queue *queue.Memory
	eng   *push.Engine
}

// openNode opens the store and builds (but does not start) the engine;
// extra functions may change the engine's options (e.g. its observer).
func openNode(ctx context.Context, ef *engineFlags, workers int, log *slog.Logger, extra ...func(*push.Options)) (*node, error) {
	if err := ef.validate(); err != nil {
		return nil, err
	}
	popts, err := ef.platformOptions()
	if err != nil {
		return nil, err
	}
	store, err := storage.Open(ctx, ef.db)
	if err != nil {
		return nil, err
	}
	q := queue.NewMemory(queue.MemoryOptions{Workers: workers, Logger: log})
	po := push.Options{
		Store:             store,
		Queue:             q,
		Platforms:         platforms.Builtin(popts),
		Logger:            log,
		Limits:            ef.limits(),
		Points:            ef.pointsPolicy(),
		KeyPrefix:         ef.keyPrefix,
		LegacyKeyPrefixes: ef.legacy(),
	}
	for _, f := range extra {
		f(&po)
	}
	eng, err := push.New(po)
	if err != nil {
		store.Close()
		return nil, err
	}
	return &node{store: store, queue: q, eng: eng}, nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	var ef engineFlags
	ef.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	workers := fs.Int("workers", 8, "jobs sent at once")
	drain := fs.Duration("drain-timeout", 15*time.Second, "on SIGTERM, how long running sends may take to finish")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	if *workers < 1 {
		return errors.New("--workers must be at least 1 (the embedded queue has no other worker)")
	}
	log, err := ef.logger(stderr)
	if err != nil {
		return err
	}
	m := metrics.New(metrics.Options{Logger: log})
	n, err := openNode(ctx, &ef, *workers, log, func(o *push.Options) { o.Observer = m })
	if err != nil {
		return err
	}
	defer n.store.Close()
	m.Platforms(n.eng.PlatformNames())
	m.WatchBacklog(n.store, n.eng.PlatformNames())
	if err := n.eng.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = n.eng.Stop(context.Background())
		return err
	}
	api := transport.New(n.eng, transport.Options{Logger: log, Observer: m, Metrics: m.Handler(), Version: version})
	srv := transport.NewHTTPServer(*addr, api, ef.syncWait)
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("herald serving", "addr", ln.Addr().String(), "docs", "http://"+ln.Addr().String()+"/api/docs", "db", redactDSN(ef.db), "workers", *workers,
		"points", ef.points, "rate_limit", ef.rateLimit, "sync_wait", ef.syncWait)
	fmt.Fprintf(stdout, "herald listening on http://%s/api\n", ln.Addr())

	select {
	case err := <-served:
		_ = n.eng.Stop(context.Background())
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	// Drain: new sends get 503 while the listener stays open; running
	// sends get until the drain timeout; queued jobs stay for the next start.
	log.Info("draining", "timeout", *drain)
	n.eng.Drain()
	dctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := n.eng.Stop(dctx); err != nil {
		log.Warn("sends still running at the drain timeout were stopped; they become uncertain at the next start", "err", err)
	}
	sctx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	db := fs.String("db", "herald.db", "database: a SQLite file path")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	if err := checkDB(*db); err != nil {
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
	return printJSON(stdout, map[string]any{"db": *db, "migrations": status})
}

// redactDSN hides the password of a database URL, for logs.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}
