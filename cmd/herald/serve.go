package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/heraldpush/herald/cluster"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
	"github.com/redis/go-redis/v9"
)

// node is a running engine with its store, queue and, in scale-out mode,
// its Redis client.
type node struct {
	store   *storage.Store
	queue   push.Queue
	eng     *push.Engine
	closers []func() error
}

// close releases the store and the Redis connections, after the engine
// has stopped.
func (n *node) close() {
	for i := len(n.closers) - 1; i >= 0; i-- {
		_ = n.closers[i]()
	}
	n.closers = nil
}

// openNode opens the store and builds (but does not start) the engine:
// SQLite or PostgreSQL with the in-process queue, or, with --redis,
// PostgreSQL with the asynq queue, completion notices and rate limit in
// Redis, as one node of many. extra functions may change the engine's
// options (e.g. its observer).
func openNode(ctx context.Context, ef *engineFlags, workers int, log *slog.Logger, extra ...func(*push.Options)) (*node, error) {
	if err := ef.validate(); err != nil {
		return nil, err
	}
	popts, err := ef.platformOptions()
	if err != nil {
		return nil, err
	}
	sealer, err := ef.sealer(log)
	if err != nil {
		return nil, err
	}
	store, err := storage.Open(ctx, ef.db, storage.WithSealer(sealer))
	if err != nil {
		return nil, err
	}
	n := &node{store: store, closers: []func() error{store.Close}}
	po := push.Options{
		Store:             store,
		Platforms:         platforms.Builtin(popts),
		Logger:            log,
		Limits:            ef.limits(),
		Points:            ef.pointsPolicy(),
		KeyPrefix:         ef.keyPrefix,
		LegacyKeyPrefixes: ef.legacy(),
	}
	if ef.redis == "" {
		n.queue = queue.NewMemory(queue.MemoryOptions{Workers: workers, Logger: log})
	} else {
		ropt, err := ef.redisOptions()
		if err != nil {
			n.close()
			return nil, err
		}
		rdb := redis.NewClient(ropt)
		n.closers = append(n.closers, rdb.Close)
		notifier := cluster.NewNotifier(ctx, rdb, cluster.NotifierOptions{Namespace: ef.redisNamespace, Logger: log})
		n.closers = append(n.closers, notifier.Close)
		// An idle worker pool looks for new tasks every 10 ms (5 to 15 ms
		// with asynq's jitter), not the queue's default 100 ms: that wait
		// is a send's latency whenever the queue runs empty, and an empty
		// poll is one cheap Redis call.
		n.queue = queue.NewRedis(rdb, queue.RedisOptions{Namespace: ef.redisNamespace, Workers: workers, Logger: log, PollInterval: 10 * time.Millisecond})
		po.Notifier = notifier
		po.RateLimiter = cluster.NewRateLimiter(rdb, cluster.RateLimiterOptions{Namespace: ef.redisNamespace, Logger: log})
		po.Shared = true
		po.ReconcileInterval = ef.reconcile
	}
	po.Queue = n.queue
	for _, f := range extra {
		f(&po)
	}
	eng, err := push.New(po)
	if err != nil {
		n.close()
		return nil, err
	}
	n.eng = eng
	return n, nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	var ef engineFlags
	ef.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	workers := fs.Int("workers", 8, "jobs sent at once (0: API only, with --redis)")
	drain := fs.Duration("drain-timeout", 15*time.Second, "on SIGTERM, how long running sends may take to finish")
	tlsCert := fs.String("tls-cert", "", "PEM certificate chain: serve HTTPS (with --tls-key); without it, serve HTTP behind a TLS-terminating proxy")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's runtime profiles (/debug/pprof/) on this address, e.g. 127.0.0.1:6060 (loopback only; empty: off)")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	switch {
	case (*tlsCert == "") != (*tlsKey == ""):
		return errors.New("--tls-cert and --tls-key go together: give both to serve HTTPS, or neither")
	case *workers < 0:
		return errors.New("--workers cannot be negative")
	case *workers == 0 && ef.redis == "":
		return errors.New("--workers 0 (API only) needs --redis: with the embedded queue no other process works the jobs; give --workers 1 or more")
	}
	log, err := ef.logger(stderr)
	if err != nil {
		return err
	}
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr, log, stdout)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	m := metrics.New(metrics.Options{Logger: log})
	n, err := openNode(ctx, &ef, *workers, log, func(o *push.Options) { o.Observer = m })
	if err != nil {
		return err
	}
	defer n.close()
	if err := checkSecrets(ctx, n, log); err != nil {
		return err
	}
	m.Platforms(n.eng.PlatformNames())
	m.WatchBacklog(n.store, n.eng.PlatformNames())
	if err := n.eng.Start(ctx); err != nil {
		return err
	}
	scheme := "http"
	var cert tls.Certificate
	if *tlsCert != "" {
		if cert, err = tls.LoadX509KeyPair(*tlsCert, *tlsKey); err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = n.eng.Stop(context.Background())
		return err
	}
	api := transport.New(n.eng, transport.Options{Logger: log, Observer: m, Metrics: m.Handler(), Version: version})
	srv := transport.NewHTTPServer(*addr, api, ef.syncWait)
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	if scheme == "https" {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := scheme + "://" + ln.Addr().String()
	log.Info("herald serving", "addr", ln.Addr().String(), "docs", base+"/api/docs",
		"db", storage.Redact(ef.db), "redis", redactRedis(ef.redis),
		"workers", *workers, "points", ef.points, "rate_limit", ef.rateLimit, "sync_wait", ef.syncWait)
	fmt.Fprintf(stdout, "herald listening on %s/api\n", base)

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
	db := fs.String("db", "herald.db", "database: a SQLite file path or a PostgreSQL URL")
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
	return printJSON(stdout, map[string]any{"db": storage.Redact(*db), "migrations": status})
}
