package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

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
	for _, group := range [][]adminEntry{accountCommands(), keyCommands(), botCommands(), targetCommands(), pointsCommands(), jobCommands(), secretsCommands()} {
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
		fmt.Fprintf(&b, "  %-16s %s\n", c.name(), c.synopsis)
	}
	b.WriteString("\nEvery command prints one JSON object on stdout. --db (or HERALD_DB) selects the database.\n")
	b.WriteString("\"herald admin <noun> <verb> -h\" lists a command's flags.\n")
	return b.String()
}

// admin runs one admin command and returns the exit code: 0 with one JSON
// object on stdout, or 1 with the error on stderr.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, adminUsage())
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 1
	}
	out, err := adminRun(ctx, args[0], args[1], args[2:], stderr)
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	if err := printJSON(stdout, out); err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	return 0
}

func adminRun(ctx context.Context, noun, verb string, args []string, stderr io.Writer) (any, error) {
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
	fs := newFlagSet("admin "+entry.name(), stderr)
	var ef engineFlags
	ef.register(fs)
	cmd := entry.make()
	cmd.flags(fs)
	if err := parseFlags(fs, args, ef.names()); err != nil {
		return nil, err
	}
	n, err := openNode(ctx, &ef, 0, slog.New(slog.NewTextHandler(io.Discard, nil)), nodeParts{})
	if err != nil {
		return nil, err
	}
	defer n.Close()
	out, err := cmd.run(ctx, n)
	if err != nil {
		var pe *push.Error
		if errors.As(err, &pe) && pe.Message != "" {
			return nil, errors.New(pe.Message)
		}
		return nil, err
	}
	return out, nil
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
