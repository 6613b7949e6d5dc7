// Command herald runs Herald: the push engine behind its HTTP API, its
// workers, its migrations, its administration and a demo.
//
//	herald serve     run the API and the workers (SQLite and an in-process queue by default)
//	herald worker    run workers only, as a node of a scale-out installation (PostgreSQL + Redis)
//	herald migrate   create or upgrade the database schema
//	herald admin     manage accounts, users, invites, keys, bots, targets, points and jobs (JSON out)
//	herald demo      run everything in one process against fakes of several platforms and send through each
//	herald bench     measure throughput, latency and the server's costs under load
//	herald send      send one message through a running server's API; the exit code tells its outcome
//	herald version   print the version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/heraldpush/herald/internal/buildinfo"
)

// version may be set at build time with -ldflags "-X main.version=…";
// without it the module version and VCS stamp of the build are used (see
// internal/buildinfo).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `herald — a message push engine

Usage:
  herald serve   [flags]   run the HTTP API and the workers
                           (--workers 0 with --redis: the API only)
  herald worker  [flags]   run workers only (needs --redis and a PostgreSQL --db)
  herald migrate [flags]   create or upgrade the database schema
  herald admin   <noun> <verb> [flags]   manage accounts, users, invites, keys, bots, targets, points, jobs
  herald demo    [flags]   run a self-contained demo against fakes of several platforms
  herald bench   [flags]   load-test an embedded server (or --url) and report
                           throughput, latency, CPU, allocations and memory
  herald send    [flags] [text | -]   send one message through a running server's API;
                           the exit code tells delivered, pending, uncertain, failed, refused
  herald version           print the version

Run "herald <command> -h" for a command's flags. A configuration flag has
an environment twin (--rate-limit is HERALD_RATE_LIMIT; -h names it),
except bench's, which are command line only, and send's (but --url and
--key: HERALD_URL and HERALD_API_KEY).
`

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "worker":
		err = worker(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrateCmd(ctx, args[1:], stdout, stderr)
	case "admin":
		return admin(ctx, args[1:], os.Stdin, stdout, stderr)
	case "demo":
		err = demo(ctx, args[1:], stdout, stderr)
	case "bench":
		err = benchCmd(ctx, args[1:], stdout, stderr)
	case "send":
		return sendCmd(ctx, args[1:], os.Stdin, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, buildinfo.Read(version))
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "herald: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		var help *helpRequest
		if errors.As(err, &help) {
			fmt.Fprint(stdout, help.text)
			return 0
		}
		fmt.Fprintln(stderr, "herald:", err)
		return 1
	}
	return 0
}
