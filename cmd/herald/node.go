package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/heraldpush/herald/cluster"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
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

// close releases the store, the Redis connections and the profiles'
// listener, after the engine has stopped.
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
		LegacyKeyPrefixes: splitList(ef.legacyPrefixes),
		AuthRecheck:       ef.authRecheck,
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
		shared := cluster.NewNode(ctx, rdb, cluster.NodeOptions{Namespace: ef.redisNamespace, Logger: log, Queue: queue.RedisOptions{Workers: workers}})
		n.closers = append(n.closers, rdb.Close, shared.Close)
		shared.Apply(&po)
		n.queue = shared.Queue
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

// nodeFlags are the settings of a long-running node, herald serve or
// herald worker: the engine's, and its workers, drain timeout and profiles.
type nodeFlags struct {
	engineFlags
	workers   int
	drain     time.Duration
	pprofAddr string
}

// register defines the flags; workersUsage tells what --workers means to
// the command.
func (nf *nodeFlags) register(fs *flag.FlagSet, workersUsage string) {
	nf.engineFlags.register(fs)
	fs.IntVar(&nf.workers, "workers", 8, workersUsage)
	fs.DurationVar(&nf.drain, "drain-timeout", 15*time.Second, "on SIGTERM, how long running sends may take to finish")
	fs.StringVar(&nf.pprofAddr, "pprof-addr", "", "serve Go's runtime profiles (/debug/pprof/) on this address, e.g. 127.0.0.1:6060 (loopback only; empty: off)")
}

// open makes the node's logger, serves the runtime profiles when
// --pprof-addr asks for them, opens the node (extra may change the
// engine's options) and refuses to go on when its secret key cannot open
// the stored bot credentials. The engine is not started; closing the node
// also stops the profiles.
func (nf *nodeFlags) open(ctx context.Context, stdout, stderr io.Writer, extra ...func(*push.Options)) (*node, *slog.Logger, error) {
	log, err := nf.logger(stderr)
	if err != nil {
		return nil, nil, err
	}
	stopPprof := func() {}
	if nf.pprofAddr != "" {
		if stopPprof, err = servePprof(nf.pprofAddr, log, stdout); err != nil {
			return nil, nil, err
		}
	}
	n, err := openNode(ctx, &nf.engineFlags, nf.workers, log, extra...)
	if err != nil {
		stopPprof()
		return nil, nil, err
	}
	n.closers = append([]func() error{func() error { stopPprof(); return nil }}, n.closers...)
	if err := checkSecrets(ctx, n, log); err != nil {
		n.close()
		return nil, nil, err
	}
	return n, log, nil
}

// stop stops the node's engine, giving running sends until the drain
// timeout; late is the warning logged about the sends it had to cut off.
func (nf *nodeFlags) stop(n *node, log *slog.Logger, late string) {
	log.Info("draining", "timeout", nf.drain)
	ctx, cancel := context.WithTimeout(context.Background(), nf.drain)
	defer cancel()
	if err := n.eng.Stop(ctx); err != nil {
		log.Warn(late, "err", err)
	}
}
