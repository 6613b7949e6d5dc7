package main

import (
	"flag"
	"fmt"
	"strings"
)

// helpRequest is what parseFlags returns when -h (or --help) was given:
// the command's help, which the caller prints on stdout before exiting 0.
type helpRequest struct{ text string }

func (h *helpRequest) Error() string { return "help requested" }

// commandDoc is what a command's help says beside its flags.
type commandDoc struct {
	usage    string   // the arguments after the command's name
	about    string   // what the command does, a sentence or two
	examples []string // command lines, each optionally followed by "  # comment"
	// own defines the command's own flags into a flag set, when its flag
	// set also holds shared ones that the help leaves to another page.
	own    func(fs *flag.FlagSet)
	footer string // printed after the flags
}

// commandDocs returns the help of the command a flag set is named after
// ("herald serve", "herald admin bot create"); an unknown name gets the
// flags alone.
func commandDocs(name string) commandDoc {
	name = strings.TrimPrefix(name, "herald ")
	if d, ok := adminDoc(name); ok {
		return d
	}
	switch name {
	case "serve":
		return commandDoc{
			usage: "[flags]",
			about: "Runs the HTTP API (under /api), the web console (at /) and the workers that send. " +
				"By default on a SQLite file and an in-process queue: nothing else to install.",
			examples: []string{
				"herald serve  # herald.db beside you, http://127.0.0.1:8080",
				"herald serve --addr :8080 --signup invite --public-url https://push.example.com",
				"herald serve --db postgres://herald@db:5432/herald --redis redis://cache:6379/0 --workers 0  # an API node of a scale-out installation",
			},
		}
	case "worker":
		return commandDoc{
			usage: "[flags]",
			about: "Runs workers only, as a node of a scale-out installation: they take jobs from Redis and record them in PostgreSQL. With --ops-addr it answers /healthz, /readyz and /metrics there.",
			examples: []string{
				"herald worker --db postgres://herald@db:5432/herald --redis redis://cache:6379/0 --workers 16",
				"herald worker --db postgres://herald@db:5432/herald --redis redis://cache:6379/0 --ops-addr 10.0.0.5:9090",
			},
		}
	case "migrate":
		return commandDoc{
			usage: "[flags]",
			about: "Creates the database schema, or upgrades it to this version's; serve and worker refuse a schema that is behind.",
			examples: []string{
				"herald migrate --db herald.db",
				"herald migrate --db postgres://herald@db:5432/herald",
			},
		}
	case "demo":
		return commandDoc{
			usage: "[flags]",
			about: "Runs a whole Herald in one process against fakes of several platforms on loopback, sends through each and shows what each platform received.",
			examples: []string{
				"herald demo",
				"herald demo --keep  # then try the API with the curl line it prints",
			},
		}
	case "bench":
		return commandDoc{
			usage: "[flags]",
			about: "Load-tests an embedded server (or a running one with --url) and reports throughput, latency, CPU, allocations and memory. See BENCHMARKS.md.",
			examples: []string{
				"herald bench --scenario single --concurrency 50 --duration 10s",
				"herald bench --json --db postgres://postgres@127.0.0.1:5432/bench --redis redis://127.0.0.1:6379/0",
				"herald bench --url http://127.0.0.1:8080/api --key $HERALD_API_KEY --bot 1 --targets 2,3",
			},
		}
	case "send":
		return commandDoc{
			usage: "[flags] [text | -]",
			about: "Sends one message through a running server's API (POST /api/openapi/v1/push/private) and reads the answer by the contract's rules. " +
				"The text is the arguments after the flags, joined by spaces, or standard input when there are none (or \"-\"). " +
				"A send carries an Idempotency-Key (--key-id, or a new one): a 429 or 503 is retried with the same key and body, " +
				"and a send whose answer was lost is never sent again under another key.",
			examples: []string{
				`herald send --url http://127.0.0.1:8080/api --key "$KEY" --bot 1 --target 2 "deployed v42"`,
				`export HERALD_URL=http://127.0.0.1:8080/api HERALD_API_KEY=hrd_…  # then --url and --key can be left out`,
				`herald send --bot 1 --target 2 --markdown --key-id deploy-42 --wait "**deployed** v42"`,
				`df -h | herald send --bot 1 --target 2  # the text from standard input`,
				`herald send --bot 3 --image https://example.com/graph.png "load at 09:00"  # a push relay: no target`,
				`herald send --json --bot 1 --target 2 "hello" | jq -r .outcome`,
			},
			footer: exitCodes,
		}
	}
	return commandDoc{usage: "[flags]"}
}

// helpText renders a command's help: usage, what it does, its flags (its
// own alone when doc.own says which) in the flag package's format, and
// examples.
func helpText(fs *flag.FlagSet, doc commandDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s %s\n", fs.Name(), doc.usage)
	if doc.about != "" {
		fmt.Fprintf(&b, "\n%s\n", doc.about)
	}
	if doc.own != nil {
		fs = flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		doc.own(fs)
	}
	var flags strings.Builder
	fs.SetOutput(&flags)
	fs.PrintDefaults()
	if flags.Len() > 0 {
		b.WriteString("\nFlags:\n")
		b.WriteString(flags.String())
	}
	if doc.footer != "" {
		fmt.Fprintf(&b, "\n%s\n", doc.footer)
	}
	if len(doc.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range doc.examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	return b.String()
}

// adminDoc is the help of one admin command: its own arguments and an
// example of its noun; the engine's flags every admin command takes are
// listed once, by "herald admin -h".
func adminDoc(name string) (commandDoc, bool) {
	for _, c := range adminCommands() {
		if "admin "+c.name() != name {
			continue
		}
		return commandDoc{
			usage:    c.synopsis,
			own:      c.make().flags,
			footer:   "Every admin command also takes the database flags (--db, --secret-key-file, …) that \"herald admin -h\" lists.",
			examples: adminExamples(c.noun),
		}, true
	}
	return commandDoc{}, false
}

// adminExamples returns command lines that show a noun's commands at
// work.
func adminExamples(noun string) []string {
	switch noun {
	case "account":
		return []string{"herald admin account create --name acme", "herald admin account suspend --id 2"}
	case "user":
		return []string{"herald admin user create --account 1 --email ops@example.com --role operator  # prints a generated password once",
			"printf '%s\\n' \"$PASSWORD\" | herald admin user create --account 2 --email dev@example.com --password-stdin"}
	case "invite":
		return []string{"herald admin invite create --new-account --email new@example.com  # a sign-up code for a new account",
			"herald admin invite list --account 2"}
	case "key":
		return []string{"herald admin key create --account 2 --expires 720h  # prints the key once", "herald admin key revoke --id 5"}
	case "bot":
		return []string{`herald admin bot create --account 2 --platform telegram --name alerts --config '{"token":"123456:ABC…"}' --verify`,
			`herald admin bot update --id 1 --config '{"token":"123456:NEW…"}' --verify  # replace the credentials`}
	case "target":
		return []string{"herald admin target bind --bot 1 --type user --address 424242 --name me",
			"herald admin target invite --bot 1 --ttl 24h  # a code the user sends to the bot to bind itself"}
	case "points":
		return []string{`herald admin points grant --account 2 --amount 500 --reason "invoice 2026-11"`, "herald admin points ledger --account 2"}
	case "job":
		return []string{"herald admin job list --account 2 --state uncertain",
			`herald admin job resolve --id 01J… --outcome succeeded --note "the user confirmed receipt"`}
	case "secrets":
		return []string{"herald admin secrets status", "herald admin secrets rotate --secret-key-file new.key --old-secret-key-files old.key"}
	}
	return nil
}

// adminHelp is "herald admin -h" (every command, and the flags they all
// take) or "herald admin <noun> -h" (the noun's commands).
func adminHelp(noun string) (string, bool) {
	var b strings.Builder
	if noun == "" {
		b.WriteString(adminUsage())
		fs := newFlagSet("admin")
		var ef engineFlags
		ef.register(fs)
		fs.VisitAll(func(f *flag.Flag) { markTwin(f, envName(f.Name)) })
		b.WriteString("\nFlags of every admin command:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		return b.String(), true
	}
	found := false
	fmt.Fprintf(&b, "Usage: herald admin %s <verb> [flags]\n\n", noun)
	for _, c := range adminCommands() {
		if c.noun == noun {
			found = true
			fmt.Fprintf(&b, "  %-22s %s\n", c.name(), c.synopsis)
		}
	}
	if !found {
		return "", false
	}
	fmt.Fprintf(&b, "\n\"herald admin %s <verb> -h\" lists a command's flags.\n\nExamples:\n", noun)
	for _, e := range adminExamples(noun) {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String(), true
}
