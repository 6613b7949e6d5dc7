package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/heraldpush/herald/storage"
)

// worker runs `herald worker`: the engine's workers, reconciler and
// sweeper without the HTTP API, as one node of a scale-out installation.
func worker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker")
	var nf nodeFlags
	nf.register(fs, "jobs sent at once")
	if err := parseFlags(fs, args, nil); err != nil {
		return err
	}
	if nf.redis == "" {
		return errors.New("herald worker needs --redis and a PostgreSQL --db: it works the jobs that herald serve nodes queue in Redis (with the embedded queue, herald serve runs the workers itself)")
	}
	if nf.workers < 1 {
		return errors.New("--workers must be at least 1")
	}
	n, closeNode, log, err := nf.open(ctx, stdout, stderr, nodeParts{})
	if err != nil {
		return err
	}
	defer closeNode()
	if err := n.Start(ctx); err != nil {
		return err
	}
	log.Info("herald worker running", "db", storage.Redact(nf.db), "redis", redactRedis(nf.redis), "workers", nf.workers,
		"namespace", nf.redisNamespace)
	fmt.Fprintf(stdout, "herald worker running with %d workers\n", nf.workers)
	<-ctx.Done()
	nf.stop(n, log, "sends still running at the drain timeout were stopped; each becomes uncertain when another worker is handed it")
	log.Info("stopped")
	return nil
}
