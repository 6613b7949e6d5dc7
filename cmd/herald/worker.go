package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/heraldpush/herald/storage"
)

// worker runs `herald worker`: the engine's workers, reconciler and
// sweeper without the HTTP API, as one node of a scale-out installation.
func worker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", stderr)
	var ef engineFlags
	ef.register(fs)
	workers := fs.Int("workers", 8, "jobs sent at once")
	drain := fs.Duration("drain-timeout", 15*time.Second, "on SIGTERM, how long running sends may take to finish")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's runtime profiles (/debug/pprof/) on this address, e.g. 127.0.0.1:6060 (loopback only; empty: off)")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	if ef.redis == "" {
		return errors.New("herald worker needs --redis and a PostgreSQL --db: it works the jobs that herald serve nodes queue in Redis (with the embedded queue, herald serve runs the workers itself)")
	}
	if *workers < 1 {
		return errors.New("--workers must be at least 1")
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
	n, err := openNode(ctx, &ef, *workers, log)
	if err != nil {
		return err
	}
	defer n.close()
	if err := checkSecrets(ctx, n, log); err != nil {
		return err
	}
	if err := n.eng.Start(ctx); err != nil {
		return err
	}
	log.Info("herald worker running", "db", storage.Redact(ef.db), "redis", redactRedis(ef.redis), "workers", *workers,
		"namespace", ef.redisNamespace)
	fmt.Fprintf(stdout, "herald worker running with %d workers\n", *workers)
	<-ctx.Done()
	log.Info("draining", "timeout", *drain)
	dctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := n.eng.Stop(dctx); err != nil {
		log.Warn("sends still running at the drain timeout were stopped; each becomes uncertain when another worker is handed it", "err", err)
	}
	log.Info("stopped")
	return nil
}
