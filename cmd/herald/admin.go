package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

// adminCmd is one `herald admin <noun> <verb>`: it defines its own flags
// into its fields, then runs on the opened node. It acts as the system
// principal: whoever can run herald admin on the database's machine runs
// the service.
type adminCmd interface {
	flags(fs *flag.FlagSet)
	run(ctx context.Context, n *node.Node) (any, error)
}

// stdinReader is an adminCmd that reads its standard input (a password
// given with --password-stdin).
type stdinReader interface {
	setStdin(r io.Reader)
}

// checker is an adminCmd that checks its flags before the database is
// opened, so that a refused command opens (and creates) nothing.
type checker interface {
	check() error
}

// adminEntry is a line of the admin table: a command, the synopsis of its
// arguments, and a maker of a fresh command.
type adminEntry struct {
	noun, verb string
	synopsis   string
	make       func() adminCmd
}

func (a adminEntry) name() string { return a.noun + " " + a.verb }

// adminCommands is every admin command, resource by resource; each
// resource's commands live in admin_<noun>.go.
func adminCommands() []adminEntry {
	var all []adminEntry
	for _, group := range [][]adminEntry{accountCommands(), userCommands(), inviteCommands(), keyCommands(), botCommands(), targetCommands(), pointsCommands(), jobCommands(), secretsCommands()} {
		all = append(all, group...)
	}
	return all
}

// adminUsage is the usage of herald admin, built from the table.
func adminUsage() string {
	var b strings.Builder
	b.WriteString("Usage: herald admin <noun> <verb> [flags]\n\n")
	noun := ""
	for _, c := range adminCommands() {
		if c.noun != noun && noun != "" {
			b.WriteString("\n")
		}
		noun = c.noun
		fmt.Fprintf(&b, "  %-22s %s\n", c.name(), c.synopsis)
	}
	b.WriteString("\nEvery command prints one JSON object on stdout. --db (or HERALD_DB) selects the database.\n")
	b.WriteString("\"herald admin <noun> <verb> -h\" lists a command's flags.\n")
	return b.String()
}

// admin runs one admin command and returns the exit code: 0 with one JSON
// object on stdout, or 1 with the error on stderr and nothing on stdout.
func admin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && isHelpArg(args[0]):
		text, _ := adminHelp("")
		fmt.Fprint(stdout, text)
		return 0
	case len(args) == 2 && isHelpArg(args[1]):
		if text, ok := adminHelp(args[0]); ok {
			fmt.Fprint(stdout, text)
			return 0
		}
		fmt.Fprintf(stderr, "herald admin: unknown noun %q\n\n%s", args[0], adminUsage())
		return 1
	case len(args) < 2:
		if len(args) == 1 {
			if text, ok := adminHelp(args[0]); ok {
				fmt.Fprint(stderr, text)
				return 1
			}
		}
		fmt.Fprint(stderr, adminUsage())
		return 1
	}
	out, err := adminRun(ctx, args[0], args[1], args[2:], stdin, stderr)
	var help *helpRequest
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	// Encoded whole before any of it is written: a failure prints nothing.
	var buf bytes.Buffer
	if err := printJSON(&buf, out); err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	return 0
}

// isHelpArg reports whether an argument asks for help.
func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

func adminRun(ctx context.Context, noun, verb string, args []string, stdin io.Reader, stderr io.Writer) (any, error) {
	var entry *adminEntry
	for _, c := range adminCommands() {
		if c.noun == noun && c.verb == verb {
			entry = &c
			break
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("unknown command %q\n\n%s", noun+" "+verb, adminUsage())
	}
	fs := newFlagSet("admin " + entry.name())
	var ef engineFlags
	ef.register(fs)
	cmd := entry.make()
	cmd.flags(fs)
	if err := parseFlags(fs, args, ef.names()); err != nil {
		return nil, err
	}
	if c, ok := cmd.(checker); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	if r, ok := cmd.(stdinReader); ok {
		r.setStdin(stdin)
	}
	n, err := openNode(ctx, &ef, 0, slog.New(slog.NewTextHandler(io.Discard, nil)), nodeParts{})
	if err != nil {
		return nil, err
	}
	defer n.Close()
	out, err := cmd.run(ctx, n)
	if err != nil {
		return nil, engineError(err, fs)
	}
	return out, nil
}

// engineError words an engine's error for the command line: its message,
// after the flag it concerns when the command has that flag, and ending
// with its stable reason, e.g. "--amount: the account has 3 points:
// deducting 5 would take it below zero (insufficient_points)". The cause
// behind the message is left out, as the HTTP API leaves it out.
func engineError(err error, fs *flag.FlagSet) error {
	var pe *push.Error
	if !errors.As(err, &pe) {
		return err
	}
	msg := pe.Message
	if msg == "" {
		msg = pe.Kind.String()
	}
	if name := flagOf(pe, fs); name != "" {
		msg = "--" + name + ": " + msg
	}
	return fmt.Errorf("%s (%s)", msg, push.ReasonOf(pe))
}

// fieldFlags returns the flags that may give an input the engine names,
// in the order they are looked for in a command.
func fieldFlags(f push.Field) []string {
	switch f {
	case push.FieldBot:
		return []string{"bot", "id"}
	case push.FieldTarget:
		return []string{"target", "id"}
	case push.FieldTargetType:
		return []string{"type"}
	case push.FieldName:
		return []string{"name"}
	case push.FieldAddress:
		return []string{"address"}
	case push.FieldConfig:
		return []string{"config"}
	case push.FieldJob:
		return []string{"id"}
	case push.FieldIdempotencyKey:
		return []string{"key"}
	case push.FieldCursor:
		return []string{"cursor"}
	case push.FieldLimit:
		return []string{"limit"}
	}
	return nil
}

// reasonFlags returns the flags that may give the input an error is
// about, by its reason, for the errors that name no Field.
func reasonFlags(reason string) []string {
	switch reason {
	case "account_not_found":
		return []string{"account", "id"}
	case "bot_not_found":
		return []string{"bot", "id"}
	case "target_not_found":
		return []string{"target", "id"}
	case "user_not_found", "invite_not_found", "bind_code_not_found", "job_not_found", "last_operator", "invite_used", "job_not_uncertain":
		return []string{"id"}
	case "invalid_role":
		return []string{"role"}
	case "invalid_email", "email_taken":
		return []string{"email"}
	case "weak_password":
		return []string{"password-stdin"}
	case "invalid_expiry":
		return []string{"ttl", "expires"}
	case "invalid_uses":
		return []string{"uses"}
	case "invalid_amount", "insufficient_points":
		return []string{"amount"}
	case "invalid_reason":
		return []string{"reason"}
	case "invalid_state":
		return []string{"state"}
	case "invalid_range":
		return []string{"until"}
	case "invalid_balance":
		return []string{"balance"}
	case "invalid_outcome":
		return []string{"outcome"}
	case "invalid_note":
		return []string{"note"}
	case "unknown_platform":
		return []string{"platform"}
	case "invalid_config", "credentials_refused":
		return []string{"config"}
	case "bot_not_listening":
		return []string{"bot"}
	}
	return nil
}

// flagOf returns the name of the command's flag an engine error is about,
// or "" when the command has none such.
func flagOf(pe *push.Error, fs *flag.FlagSet) string {
	for _, n := range append(fieldFlags(pe.Field), reasonFlags(pe.Reason)...) {
		if fs.Lookup(n) != nil {
			return n
		}
	}
	return ""
}

// need refuses a missing required flag.
func need(name string, ok bool) error {
	if !ok {
		return fmt.Errorf("--%s is required", name)
	}
	return nil
}

// items is a list command's output: {"items": […]}, never null.
type items[T any] struct {
	Items []T `json:"items"`
}

// listAll reads every page of a list, oldest item first, and converts
// each with conv.
func listAll[T, O any](list func(cursor string) (push.Page[T], error), conv func(T) O) (items[O], error) {
	var all []T
	cursor := ""
	for {
		p, err := list(cursor)
		if err != nil {
			return items[O]{}, err
		}
		all = append(all, p.Items...)
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	out := items[O]{Items: make([]O, 0, len(all))}
	for i := len(all) - 1; i >= 0; i-- {
		out.Items = append(out.Items, conv(all[i]))
	}
	return out, nil
}

// printJSON writes v as one line of JSON, without escaping HTML.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// optString is a string flag that knows whether it was given, for
// commands that change only what is given.
type optString struct {
	v   string
	set bool
}

// String returns the value given.
func (o *optString) String() string {
	if o == nil {
		return ""
	}
	return o.v
}

// Set records the value given.
func (o *optString) Set(v string) error {
	o.v, o.set = v, true
	return nil
}

// optTime returns t in UTC, or nil for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
