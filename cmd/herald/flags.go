package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
	"github.com/redis/go-redis/v9"
)

// envName is a flag's environment twin: --rate-limit → HERALD_RATE_LIMIT.
func envName(flagName string) string {
	return "HERALD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags applies the environment twins of the flags, then the command
// line, which wins. twins names the flags that have one, each with its
// variable; nil gives every flag its envName. The usage (-h) of a flag
// with a twin names it: "(env HERALD_RATE_LIMIT)". A command line
// argument that is not a flag is refused.
func parseFlags(fs *flag.FlagSet, args []string, twins map[string]string) error {
	if err := parseFlagsAndArgs(fs, args, twins); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (\"%s -h\" lists its flags)", fs.Arg(0), fs.Name())
	}
	return nil
}

// parseFlagsAndArgs is parseFlags for a command that takes arguments after
// its flags (fs.Args()).
func parseFlagsAndArgs(fs *flag.FlagSet, args []string, twins map[string]string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if twins != nil {
			if env = twins[f.Name]; env == "" {
				return
			}
		}
		markTwin(f, env)
		if v, ok := os.LookupEnv(env); ok && envErr == nil {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpRequest{helpText(fs, commandDocs(fs.Name()))}
		}
		return fmt.Errorf("%w (\"%s -h\" lists its flags)", err, fs.Name())
	}
	return nil
}

// newFlagSet returns the flag set of "herald <name>". It prints nothing
// itself: parseFlags returns a parse error with a pointer to the help,
// and the help (-h) as a helpRequest, which goes to stdout.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("herald "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// markTwin names a flag's environment twin in its usage:
// "(env HERALD_RATE_LIMIT)".
func markTwin(f *flag.Flag, env string) { f.Usage += " (env " + env + ")" }

// engineFlags are the settings of the engine shared by serve, admin and
// demo.
type engineFlags struct {
	db             string
	points         bool
	initialPoints  int64
	rateLimit      int
	syncWait       time.Duration
	queueWait      time.Duration
	jobRetention   time.Duration
	backlogBot     int
	backlogTotal   int
	keyPrefix      string
	legacyPrefixes string
	logFormat      string
	logLevel       string
	imageAllow     string
	platformTime   time.Duration
	pacing         bool
	redis          string
	redisNamespace string
	reconcile      time.Duration
	keyFile        string
	oldKeyFiles    string
	authRecheck    time.Duration
}

func (e *engineFlags) register(fs *flag.FlagSet) {
	d := push.DefaultLimits()
	fs.StringVar(&e.db, "db", "herald.db", "database: a SQLite file path, or a PostgreSQL URL (postgres://user:password@host:5432/herald?sslmode=disable) that several nodes share")
	fs.BoolVar(&e.points, "points", false, "enable the points system (a send costs 1 point per target)")
	fs.Int64Var(&e.initialPoints, "initial-points", 100, "points of a new account")
	fs.IntVar(&e.rateLimit, "rate-limit", d.RatePerMinute, "requests per minute per API key (0 or less: no limit)")
	fs.DurationVar(&e.syncWait, "sync-wait", d.SyncWait, "how long a send waits for delivery before answering 202")
	fs.DurationVar(&e.queueWait, "queue-wait", d.QueueWait, "a job not started within this time expires and its points are returned")
	fs.DurationVar(&e.jobRetention, "job-retention", d.JobRetention, "how long a job that ended (succeeded, failed, canceled, expired) is kept before it is deleted, its charges and refunds summed per month in the ledger; uncertain jobs are kept until resolved (0: keep jobs forever; at least 720h, the idempotency records' retention)")
	fs.IntVar(&e.backlogBot, "backlog-bot", d.BacklogPerBot, "most queued and running jobs per bot")
	fs.IntVar(&e.backlogTotal, "backlog-total", d.BacklogTotal, "most queued and running jobs in all")
	fs.StringVar(&e.keyPrefix, "key-prefix", push.DefaultKeyPrefix, "prefix of newly generated API keys")
	fs.StringVar(&e.legacyPrefixes, "legacy-key-prefixes", "", "comma-separated earlier key prefixes that stay valid")
	fs.StringVar(&e.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&e.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&e.imageAllow, "image-fetch-allow", "", "comma-separated networks (CIDR) that image downloads may reach although private or loopback")
	fs.DurationVar(&e.platformTime, "platform-timeout", 30*time.Second, "time cap of one platform call")
	fs.BoolVar(&e.pacing, "pacing", true, "space sends by each platform's published rate limits (turn off only against a platform server that does not enforce them, such as the fake of herald bench)")
	fs.StringVar(&e.redis, "redis", "", "Redis URL (redis://[:password@]host:6379/0): run as one node of many, with the queue, completion notices and rate limit in Redis; needs a PostgreSQL --db")
	fs.StringVar(&e.redisNamespace, "redis-namespace", "herald", "prefix of Herald's keys and queue in Redis (installations sharing one Redis use different ones)")
	fs.DurationVar(&e.reconcile, "reconcile-interval", 30*time.Second, "with --redis: how often queued jobs the queue lost are enqueued again and stale running jobs are settled")
	fs.StringVar(&e.keyFile, "secret-key-file", "", "file of the key that seals bot credentials in the database (default: the SQLite file's path + .key, created with mode 0600 on first start; HERALD_SECRET_KEY gives the key itself)")
	fs.DurationVar(&e.authRecheck, "auth-recheck", 100*time.Millisecond, "how long the server trusts its last check that no key was revoked and no account suspended; a revocation by herald admin or another node takes effect within it, one made through this server at once (0: check on every request; at most 1s)")
	fs.StringVar(&e.oldKeyFiles, "old-secret-key-files", "", "comma-separated files of earlier secret keys, kept while rotating (HERALD_OLD_SECRET_KEYS gives the keys themselves)")
}

// defaultEngineFlags returns the engine's settings with their defaults,
// for the commands that open a node without parsing the engine's flags
// (demo, and bench's seeding).
func defaultEngineFlags() engineFlags {
	var e engineFlags
	e.register(newFlagSet("defaults"))
	return e
}

// names lists the flags registered by engineFlags with their env twins.
func (e *engineFlags) names() map[string]string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	(&engineFlags{}).register(fs)
	m := make(map[string]string)
	fs.VisitAll(func(f *flag.Flag) { m[f.Name] = envName(f.Name) })
	return m
}

func (e *engineFlags) validate() error {
	switch {
	case e.syncWait <= 0:
		return errors.New("--sync-wait must be positive")
	case e.queueWait <= 0:
		return errors.New("--queue-wait must be positive")
	case e.jobRetention < 0 || e.jobRetention > 0 && e.jobRetention < push.DefaultLimits().IdempotencyTTL:
		return fmt.Errorf("--job-retention must be 0 (keep jobs forever) or at least %s: a request sent again with its Idempotency-Key within that time must find its jobs", push.DefaultLimits().IdempotencyTTL)
	case e.backlogBot <= 0 || e.backlogTotal <= 0:
		return errors.New("--backlog-bot and --backlog-total must be positive")
	case e.initialPoints < 0:
		return errors.New("--initial-points cannot be negative")
	case e.authRecheck < 0 || e.authRecheck > time.Second:
		return errors.New("--auth-recheck must be between 0 and 1s: a revoked key must stop working within a second")
	}
	if err := checkDB(e.db); err != nil {
		return err
	}
	if e.redis == "" {
		return nil
	}
	if !storage.IsPostgres(e.db) {
		return errors.New("--redis needs a PostgreSQL --db (postgres://…): the nodes that share one Redis must share one database, and a SQLite file belongs to one process")
	}
	if _, err := e.redisOptions(); err != nil {
		return err
	}
	switch {
	case e.reconcile <= 0:
		return errors.New("--reconcile-interval must be positive")
	case e.redisNamespace == "" || strings.ContainsAny(e.redisNamespace, " {}"):
		return errors.New("--redis-namespace must be a non-empty name without spaces or braces")
	}
	return nil
}

// redisOptions parses --redis into client options with timeouts that let
// a request fail fast while Redis is away.
func (e *engineFlags) redisOptions() (*redis.Options, error) {
	opt, err := redis.ParseURL(e.redis)
	if err != nil {
		return nil, fmt.Errorf("--redis: %s is not a Redis URL (redis://[:password@]host:6379/0 or rediss://…)", redactRedis(e.redis))
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = 2 * time.Second
	}
	return opt, nil
}

// redactRedis returns a Redis URL without its password, for logs.
func redactRedis(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// checkDB refuses database names this build cannot open.
func checkDB(db string) error {
	if db == "" {
		return errors.New("--db is empty: give a SQLite file path or a PostgreSQL URL")
	}
	return nil
}

func (e *engineFlags) limits() push.Limits {
	rate := e.rateLimit
	if rate <= 0 {
		rate = -1
	}
	retention := e.jobRetention
	if retention == 0 {
		retention = -1 // push reads 0 as "default"; negative keeps jobs forever
	}
	return push.Limits{
		JobRetention:  retention,
		RatePerMinute: rate,
		SyncWait:      e.syncWait,
		QueueWait:     e.queueWait,
		BacklogPerBot: e.backlogBot,
		BacklogTotal:  e.backlogTotal,
	}
}

func (e *engineFlags) pointsPolicy() push.Points {
	initial := e.initialPoints
	if initial == 0 {
		initial = -1 // push reads 0 as "default"; -1 means none
	}
	return push.Points{Enabled: e.points, Initial: initial}
}

func (e *engineFlags) platformOptions() (platforms.Options, error) {
	o := platforms.Options{Timeout: e.platformTime, NoPacing: !e.pacing}
	for _, p := range splitList(e.imageAllow) {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return o, fmt.Errorf("--image-fetch-allow: %q is not a CIDR network such as 10.0.0.0/8", p)
		}
		o.ImageAllow = append(o.ImageAllow, prefix)
	}
	return o, nil
}

func (e *engineFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(e.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", e.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch e.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", e.logFormat)
}

// splitList splits a comma-separated flag value, dropping spaces and
// empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
