package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelp: every command's -h (and --help) goes to stdout, exits 0,
// says what the command does with examples, and an admin command lists
// its own flags, not the engine's twenty; "herald admin <noun> -h" lists
// the noun's commands.
func TestHelp(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	type tc struct {
		args       []string
		want       []string // in stdout
		flags      []string // exactly these flags listed (nil: not checked)
		noExamples bool
	}
	cases := []tc{
		{args: []string{"serve"}, want: []string{"Usage: herald serve [flags]", "-addr string", "-sync-wait duration", "Examples:\n  herald serve"}},
		{args: []string{"worker"}, want: []string{"Usage: herald worker", "-workers int", "Examples:\n  herald worker --db postgres://"}},
		{args: []string{"migrate"}, want: []string{"Usage: herald migrate", "-db string", "Examples:\n  herald migrate --db herald.db"}},
		{args: []string{"demo"}, want: []string{"Usage: herald demo", "-keep", "herald demo --keep"}, flags: []string{"keep"}},
		{args: []string{"bench"}, want: []string{"Usage: herald bench", "-scenario string", "herald bench --scenario single"}},
		{args: []string{"send"}, want: []string{"Usage: herald send [flags] [text | -]", "(env HERALD_API_KEY)", "(env HERALD_URL)", "Exit codes:\n  0  delivered", "  6  unknown", "herald send --url"},
			flags: []string{"bot", "image", "json", "key", "key-id", "markdown", "target", "timeout", "url", "wait"}},
		{args: []string{"admin"}, want: []string{"Usage: herald admin <noun> <verb> [flags]", "bot create", "Flags of every admin command:", "-db string", "(env HERALD_DB)"}, noExamples: true},
		{args: []string{"admin", "bot"}, want: []string{"Usage: herald admin bot <verb> [flags]", "  bot create ", "  bot delete ", "herald admin bot create --account 2"}},
		{args: []string{"admin", "bot", "create"}, want: []string{"Usage: herald admin bot create --account ID --platform P", "herald admin -h\" lists"},
			flags: []string{"account", "config", "name", "platform", "verify"}},
		{args: []string{"admin", "account", "list"}, want: []string{"Usage: herald admin account list"}, flags: []string{}},
	}
	// Every admin command has a help of its own flags alone.
	engine := (&engineFlags{}).names()
	for _, c := range adminCommands() {
		cases = append(cases, tc{args: []string{"admin", c.noun, c.verb}, want: []string{"Usage: herald admin " + c.name()}})
	}
	for _, c := range cases {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string(nil), c.args...), h)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr strings.Builder
				if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
					t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
				}
				if stderr.Len() != 0 {
					t.Errorf("help wrote to stderr:\n%s", stderr.String())
				}
				out := stdout.String()
				for _, w := range c.want {
					if !strings.Contains(out, w) {
						t.Errorf("help lacks %q:\n%s", w, out)
					}
				}
				if !c.noExamples && !strings.Contains(out, "\nExamples:\n  herald ") {
					t.Errorf("help has no examples:\n%s", out)
				}
				var listed []string
				for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
					listed = append(listed, m[1])
					if len(c.args) == 3 && engine[m[1]] != "" {
						t.Errorf("admin command help lists the engine flag --%s (herald admin -h lists those):\n%s", m[1], out)
					}
				}
				if c.flags != nil && strings.Join(listed, ",") != strings.Join(c.flags, ",") {
					t.Errorf("help lists flags %v, want %v:\n%s", listed, c.flags, out)
				}
			})
		}
	}
}

// TestFlagErrors: a bad flag or argument is one line on stderr that
// points to the help, with nothing on stdout.
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--bogus"}, `herald: flag provided but not defined: -bogus ("herald serve -h" lists its flags)`},
		{[]string{"migrate", "extra"}, `herald: unexpected argument "extra" ("herald migrate -h" lists its flags)`},
		{[]string{"bench", "--concurrency", "many"}, `("herald bench -h" lists its flags)`},
		{[]string{"serve", "--job-retention", "24h"}, "--job-retention must be 0 (keep jobs forever) or at least 720h0m0s"},
		{[]string{"serve", "--job-retention", "-1s"}, "--job-retention must be 0"},
		{[]string{"send", "--bogus"}, `herald send: flag provided but not defined: -bogus ("herald send -h" lists its flags)`},
		{[]string{"send", "--url", "http://127.0.0.1:1/api", "--key", "k", "hello"}, `herald send: --bot is required`},
		{[]string{"admin", "bot", "create", "--bogus"}, `herald admin: flag provided but not defined: -bogus ("herald admin bot create -h" lists its flags)`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			if code := run(t.Context(), c.args, &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q, want nothing", stdout.String())
			}
			if got := strings.TrimSuffix(stderr.String(), "\n"); strings.Count(got, "\n") != 0 || !strings.Contains(got, c.want) {
				t.Errorf("stderr:\n%s\nwant one line with %q", stderr.String(), c.want)
			}
		})
	}
}
