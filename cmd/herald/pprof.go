package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's runtime profiles (the net/http/pprof handlers
// under /debug/pprof/) on addr, a listener of their own apart from the
// API, and prints "herald pprof on http://ADDR/debug/pprof/" on stdout.
// The profiles reveal no key or credential, but they describe the process:
// listen on loopback only. It returns a function that closes the listener.
func servePprof(addr string, log *slog.Logger, stdout io.Writer) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// Profiles of a minute or more must not be cut by a write timeout.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/debug/pprof/"
	log.Info("profiles served", "url", url)
	fmt.Fprintf(stdout, "herald pprof on %s\n", url)
	return func() { _ = srv.Close() }, nil
}
