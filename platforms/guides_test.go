package platforms_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald/platforms/builtin"
	"github.com/heraldpush/herald/push"
)

// The generated part of a platform's guide: its bot config fields.
const (
	fieldsBegin = "<!-- BEGIN CONFIG FIELDS: generated from the platform's ConfigFields; HERALD_UPDATE_DOCS=1 go test ./platforms -run TestPlatformGuides rewrites it -->"
	fieldsEnd   = "<!-- END CONFIG FIELDS -->"
)

// fieldsTable is the Markdown table of a platform's config fields.
func fieldsTable(fields []push.ConfigField) string {
	var b strings.Builder
	b.WriteString("| field | required | what it is and where to find it |\n|---|---|---|\n")
	for _, f := range fields {
		kind := ""
		switch {
		case f.Secret:
			kind = " (secret: never shown again)"
		case f.Kind == push.ConfigNumber:
			kind = " (a number)"
		case f.Kind == push.ConfigBool:
			kind = " (true or false)"
		case f.Kind == push.ConfigList:
			kind = " (a list of strings)"
		case len(f.Choices) > 0:
			kind = " (one of `" + strings.Join(f.Choices, "`, `") + "`)"
		}
		req := "no"
		if f.Required {
			req = "yes"
		}
		fmt.Fprintf(&b, "| `%s`%s | %s | **%s.** %s |\n", f.Name, kind, req, f.Label, strings.ReplaceAll(f.Help, "|", `\|`))
	}
	return b.String()
}

// TestPlatformGuides: every built-in platform has a setup guide,
// docs/platforms/<name>.md, whose table of config fields is the one the
// platform describes (so that the guide and the console's form never
// disagree), with a section on trying the bot with herald send; the
// guides' index and the README link every guide.
func TestPlatformGuides(t *testing.T) {
	update := os.Getenv("HERALD_UPDATE_DOCS") == "1"
	dir := filepath.Join("..", "docs", "platforms")
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	set := builtin.Platforms(nil)
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			d, ok := set[name].(push.ConfigDescriber)
			if !ok {
				t.Fatalf("%s does not describe its config fields (push.ConfigDescriber)", name)
			}
			path := filepath.Join(dir, name+".md")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("no setup guide: %v", err)
			}
			guide := string(b)
			i, j := strings.Index(guide, fieldsBegin), strings.Index(guide, fieldsEnd)
			if i < 0 || j < i {
				t.Fatalf("%s has no generated config fields section (%s … %s)", path, fieldsBegin, fieldsEnd)
			}
			want := fieldsBegin + "\n" + fieldsTable(d.ConfigFields()) + fieldsEnd
			if got := guide[i : j+len(fieldsEnd)]; got != want {
				if !update {
					t.Fatalf("%s's config fields differ from the platform's; run HERALD_UPDATE_DOCS=1 go test ./platforms -run TestPlatformGuides", path)
				}
				if err := os.WriteFile(path, []byte(guide[:i]+want+guide[j+len(fieldsEnd):]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, must := range []string{"## On the platform", "## Targets", "## Limits", "## Try it", "herald send ", "herald admin bot create --account 1 --platform " + name + " "} {
				if !strings.Contains(guide, must) {
					t.Errorf("%s does not have %q", path, must)
				}
			}
			link := "(" + name + ".md)"
			if !strings.Contains(string(index), link) {
				t.Errorf("docs/platforms/README.md does not link %s", link)
			}
			if !strings.Contains(string(readme), "(docs/platforms/"+name+".md)") {
				t.Errorf("README.md does not link docs/platforms/%s.md", name)
			}
		})
	}
}
