package bench

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Costs are what the measured time asked of the services a scale-out
// node shares with the others, per request: PostgreSQL's transactions,
// statements and CPU, Redis's commands and CPU, and Herald's CPU. Each
// figure is the difference of two readings, at the start and at the end
// of the measured time; those that could not be read are absent (-1 in
// the text report's terms: not shown).
//
// PostgreSQL's figures are the database's (pg_stat_database: every
// client of that database counts, and its backends publish their counts
// up to a second late) and Redis's the server's (INFO: every client of
// that server counts), so a run meant to measure costs has them to itself.
type Costs struct {
	// PGTransactions are the transactions committed or rolled back in the
	// database (pg_stat_database's xact_commit + xact_rollback).
	PGTransactions *float64 `json:"pg_transactions,omitempty"`
	// PGStatements are the statements executed in the database, by
	// pg_stat_statements (present only where that extension is installed
	// in the database).
	PGStatements *float64 `json:"pg_statements,omitempty"`
	// HeraldStatements are the statements the Herald server sent to
	// PostgreSQL, by its own count (herald_db_statements_total; BEGIN and
	// COMMIT included).
	HeraldStatements *float64 `json:"herald_statements,omitempty"`
	// HeraldCommits are the transactions the Herald server committed on
	// PostgreSQL, by its own count.
	HeraldCommits *float64 `json:"herald_commits,omitempty"`
	// RedisCommands are the commands Redis executed (INFO commandstats),
	// those run inside scripts (asynq's) included.
	RedisCommands *float64 `json:"redis_commands,omitempty"`
	// RedisScriptCalls are the calls of scripts among them (EVAL, EVALSHA).
	RedisScriptCalls *float64 `json:"redis_script_calls,omitempty"`
	// HeraldRedisCommands and HeraldRedisRoundTrips are the commands the
	// Herald server sent to Redis and its round trips (a pipeline is one),
	// by its own count.
	HeraldRedisCommands   *float64 `json:"herald_redis_commands,omitempty"`
	HeraldRedisRoundTrips *float64 `json:"herald_redis_round_trips,omitempty"`
	// CPU time, in microseconds: the Herald server's, PostgreSQL's (its
	// backends of the database and its background processes, read from
	// /proc where PostgreSQL runs on this machine) and Redis's (INFO cpu).
	HeraldCPUUs   *float64 `json:"herald_cpu_us,omitempty"`
	PostgresCPUUs *float64 `json:"postgres_cpu_us,omitempty"`
	RedisCPUUs    *float64 `json:"redis_cpu_us,omitempty"`
}

// costReading is one reading of the services' counters; a field below 0
// could not be read.
type costReading struct {
	pgXacts, pgStatements, pgCPU              float64
	redisCommands, redisScripts, redisCPUSecs float64
}

// costProbe reads the counters of a PostgreSQL database and a Redis
// server (either may be absent).
type costProbe struct {
	db  *sql.DB
	rdb *redis.Client
}

// newCostProbe connects to the database at dsn and the Redis at
// redisURL ("" for either: not read).
func newCostProbe(dsn, redisURL string) (*costProbe, error) {
	p := &costProbe{}
	if dsn != "" {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		p.db = db
	}
	if redisURL != "" {
		opt, err := redis.ParseURL(redisURL)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("--redis: %w", err)
		}
		p.rdb = redis.NewClient(opt)
	}
	return p, nil
}

func (p *costProbe) close() {
	if p.db != nil {
		_ = p.db.Close()
	}
	if p.rdb != nil {
		_ = p.rdb.Close()
	}
}

// read takes a reading.
func (p *costProbe) read(ctx context.Context) costReading {
	r := costReading{pgXacts: -1, pgStatements: -1, pgCPU: -1, redisCommands: -1, redisScripts: -1, redisCPUSecs: -1}
	if p.db != nil {
		p.readPostgres(ctx, &r)
	}
	if p.rdb != nil {
		p.readRedis(ctx, &r)
	}
	return r
}

func (p *costProbe) readPostgres(ctx context.Context, r *costReading) {
	var x int64
	if err := p.db.QueryRowContext(ctx,
		"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()").Scan(&x); err == nil {
		r.pgXacts = float64(x)
	}
	var calls sql.NullInt64
	if err := p.db.QueryRowContext(ctx, "SELECT sum(calls)::bigint FROM pg_stat_statements "+
		"WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&calls); err == nil && calls.Valid {
		r.pgStatements = float64(calls.Int64)
	}
	rows, err := p.db.QueryContext(ctx,
		"SELECT pid FROM pg_stat_activity WHERE datname = current_database() OR backend_type <> 'client backend'")
	if err != nil {
		return
	}
	defer rows.Close()
	var cpu time.Duration
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return
		}
		s, err := readProc(pid)
		if err != nil {
			return // not on this machine, or not ours to read
		}
		cpu += s.CPU
	}
	if rows.Err() == nil {
		r.pgCPU = cpu.Seconds()
	}
}

func (p *costProbe) readRedis(ctx context.Context, r *costReading) {
	stats, err := p.rdb.Info(ctx, "commandstats").Result()
	if err == nil {
		var all, scripts float64
		sc := bufio.NewScanner(strings.NewReader(stats))
		for sc.Scan() {
			name, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			calls, ok := infoField(rest, "calls")
			if !ok {
				continue
			}
			all += calls
			if name == "cmdstat_eval" || name == "cmdstat_evalsha" {
				scripts += calls
			}
		}
		r.redisCommands, r.redisScripts = all, scripts
	}
	if cpu, err := p.rdb.Info(ctx, "cpu").Result(); err == nil {
		var secs float64
		n := 0
		for _, line := range strings.Split(cpu, "\n") {
			name, val, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && (name == "used_cpu_sys" || name == "used_cpu_user") {
				v, err := strconv.ParseFloat(val, 64)
				if err != nil {
					return
				}
				secs += v
				n++
			}
		}
		if n == 2 {
			r.redisCPUSecs = secs
		}
	}
}

// infoField returns the number after "name=" in a line of INFO's
// comma-separated fields.
func infoField(fields, name string) (float64, bool) {
	for _, f := range strings.Split(fields, ",") {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			n, err := strconv.ParseFloat(v, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// costs returns the figures per request between two readings, and the
// Herald server's own between two samples (nil when there is no server).
func costs(before, after costReading, sb, sa *procSample, requests int64) *Costs {
	if requests <= 0 {
		return nil
	}
	n := float64(requests)
	per := func(b, a float64) *float64 {
		if b < 0 || a < 0 {
			return nil
		}
		v := (a - b) / n
		return &v
	}
	c := &Costs{
		PGTransactions:   per(before.pgXacts, after.pgXacts),
		PGStatements:     per(before.pgStatements, after.pgStatements),
		RedisCommands:    per(before.redisCommands, after.redisCommands),
		RedisScriptCalls: per(before.redisScripts, after.redisScripts),
	}
	us := func(b, a float64) *float64 {
		v := per(b, a)
		if v != nil {
			*v *= 1e6
		}
		return v
	}
	c.PostgresCPUUs = us(before.pgCPU, after.pgCPU)
	c.RedisCPUUs = us(before.redisCPUSecs, after.redisCPUSecs)
	if sb != nil && sa != nil {
		c.HeraldCPUUs = us(sb.CPU.Seconds(), sa.CPU.Seconds())
		c.HeraldStatements = per(sb.DBStatements, sa.DBStatements)
		c.HeraldCommits = per(sb.DBCommits, sa.DBCommits)
		c.HeraldRedisCommands = per(sb.RedisCommands, sa.RedisCommands)
		c.HeraldRedisRoundTrips = per(sb.RedisRoundTrips, sa.RedisRoundTrips)
	}
	return c
}

// write prints the costs for a person.
func (c *Costs) write(w *strings.Builder) {
	f := func(v *float64, format string) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf(format, *v)
	}
	fmt.Fprintf(w, "  per request  PostgreSQL: %s commits and %s statements sent (the database counted %s transactions, %s statements), %s µs CPU\n",
		f(c.HeraldCommits, "%.2f"), f(c.HeraldStatements, "%.2f"), f(c.PGTransactions, "%.2f"), f(c.PGStatements, "%.2f"), f(c.PostgresCPUUs, "%.0f"))
	fmt.Fprintf(w, "               Redis: %s commands executed (%s script calls), %s sent in %s round trips, %s µs CPU\n",
		f(c.RedisCommands, "%.2f"), f(c.RedisScriptCalls, "%.2f"), f(c.HeraldRedisCommands, "%.2f"), f(c.HeraldRedisRoundTrips, "%.2f"), f(c.RedisCPUUs, "%.0f"))
	fmt.Fprintf(w, "               Herald: %s µs CPU\n", f(c.HeraldCPUUs, "%.0f"))
}
