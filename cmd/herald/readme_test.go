package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The configuration reference in README.md lies between these markers. It
// is generated from the commands' flag sets; this test fails when it
// drifts, and rewrites it when HERALD_UPDATE_README=1.
const (
	refBegin = "<!-- BEGIN CONFIGURATION REFERENCE: generated from the flag sets; HERALD_UPDATE_README=1 go test ./cmd/herald -run TestREADMEConfigurationReference rewrites it -->"
	refEnd   = "<!-- END CONFIGURATION REFERENCE -->"
)

// flagDoc is one flag of one command.
type flagDoc struct {
	name, typ, def, usage string
	env                   string // its HERALD_* twin, if it has one
}

// commandsOf lists the commands of the top-level usage text.
func commandsOf(usage string) []string {
	re := regexp.MustCompile(`(?m)^  herald (\w+)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(usage, -1) {
		if m[1] != "version" && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// helpFlags runs "herald args… -h" in process and reads the flags from
// the usage it prints (the flag package's PrintDefaults format), with the
// environment twins parseFlags names there.
func helpFlags(t *testing.T, args ...string) []flagDoc {
	t.Helper()
	var out strings.Builder
	if code := run(t.Context(), append(args, "-h"), &out, &out); code != 0 {
		t.Fatalf("herald %v -h: exit %d: %s", args, code, out.String())
	}
	head := regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)
	deflt := regexp.MustCompile(` \(default (.*)\)$`)
	twin := regexp.MustCompile(` \(env (\S+)\)$`)
	var flags []flagDoc
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		line := sc.Text()
		if m := head.FindStringSubmatch(line); m != nil {
			typ := m[2]
			if typ == "" {
				typ = "bool"
			}
			flags = append(flags, flagDoc{name: m[1], typ: typ})
			continue
		}
		if len(flags) > 0 && strings.HasPrefix(line, "    \t") {
			f := &flags[len(flags)-1]
			text := strings.TrimPrefix(line, "    \t")
			if m := deflt.FindStringSubmatch(text); m != nil {
				f.def = strings.Trim(m[1], `"`)
				text = strings.TrimSuffix(text, m[0])
			}
			if m := twin.FindStringSubmatch(text); m != nil {
				want := envName(f.name)
				if args[0] == "send" {
					want = sendTwins()[f.name]
				}
				if m[1] != want {
					t.Fatalf("herald %v -h names %s as the twin of --%s, not %s", args, m[1], f.name, want)
				}
				f.env = m[1]
				text = strings.TrimSuffix(text, m[0])
			}
			f.usage = strings.TrimSpace(f.usage + " " + text)
		}
	}
	if len(flags) == 0 {
		t.Fatalf("herald %v -h listed no flags:\n%s", args, out.String())
	}
	return flags
}

// configReference renders the reference: one table of the configuration
// flags of every command, and one of the admin commands' arguments.
func configReference(t *testing.T) string {
	t.Helper()
	type row struct {
		flagDoc
		commands []string
	}
	var rows []*row
	add := func(cmd string, f flagDoc) {
		for _, r := range rows {
			if r.flagDoc == f {
				r.commands = append(r.commands, cmd)
				return
			}
		}
		rows = append(rows, &row{f, []string{cmd}})
	}
	engine := (&engineFlags{}).names()
	for _, cmd := range commandsOf(usage) {
		if cmd == "admin" {
			// Every admin command takes the engine's flags beside its own
			// arguments (listed below).
			for _, f := range helpFlags(t, "admin") {
				if engine[f.name] == "" {
					t.Fatalf("herald admin -h lists the flag --%s, which is not an engine flag", f.name)
				}
				add("admin", f)
			}
			continue
		}
		for _, f := range helpFlags(t, cmd) {
			add(cmd, f)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	var b strings.Builder
	b.WriteString(refBegin + "\n\n")
	b.WriteString("| flag | environment | default | commands | meaning |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		env := "—"
		if r.env != "" {
			env = "`" + r.env + "`"
		}
		def := "—"
		if r.def != "" {
			def = "`" + r.def + "`"
		}
		fmt.Fprintf(&b, "| `--%s` %s | %s | %s | %s | %s |\n", r.name, r.typ, env, def, strings.Join(r.commands, ", "), strings.ReplaceAll(r.usage, "|", "\\|"))
	}
	b.WriteString("\nEnvironment variables without a flag (serve, worker, admin, demo, bench):\n\n")
	b.WriteString("| environment | meaning |\n|---|---|\n")
	for _, e := range envOnly() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", e[0], e[1])
	}
	b.WriteString("\nArguments of the `herald admin` commands (command line only, no environment twin):\n\n")
	b.WriteString("| command | arguments |\n|---|---|\n")
	cmds := adminCommands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name() < cmds[j].name() })
	for _, c := range cmds {
		n := c.name()
		fs := flag.NewFlagSet(n, flag.ContinueOnError)
		c.make().flags(fs)
		var args []string
		fs.VisitAll(func(f *flag.Flag) {
			args = append(args, fmt.Sprintf("`--%s` %s", f.Name, f.Usage))
		})
		if len(args) == 0 {
			args = []string{"none"}
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", n, strings.Join(args, "; "))
	}
	b.WriteString("\n" + refEnd)
	return b.String()
}

// TestREADMEConfigurationReference checks that README.md lists every flag
// and environment variable of every command as the code defines them.
func TestREADMEConfigurationReference(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i, j := strings.Index(readme, refBegin), strings.Index(readme, refEnd)
	want := configReference(t)
	if os.Getenv("HERALD_UPDATE_README") == "1" {
		if i < 0 || j < i {
			t.Fatalf("README.md has no configuration reference markers to rewrite between")
		}
		if err := os.WriteFile(path, []byte(readme[:i]+want+readme[j+len(refEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the configuration reference; add these lines and run HERALD_UPDATE_README=1 go test ./cmd/herald -run TestREADMEConfigurationReference:\n%s\n%s", refBegin, refEnd)
	}
	if diff := cmp.Diff(want, readme[i:j+len(refEnd)]); diff != "" {
		t.Fatalf("README.md's configuration reference is out of date (-code +README); run HERALD_UPDATE_README=1 go test ./cmd/herald -run TestREADMEConfigurationReference:\n%s", diff)
	}
}
