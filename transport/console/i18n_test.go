package console

import (
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/builtin"
	"github.com/heraldpush/herald/push"
)

// platformFieldKey is a key of a platform's config field's words:
// field.<platform>.<field>.label or .help. The English words are the
// platform's own (push.ConfigField); only the other languages have keys.
var platformFieldKey = regexp.MustCompile(`^field\.[a-z]+\.[a-z_]+\.(label|help)$`)

// TestCatalogsHaveTheSameKeys: every English key has a Chinese entry and
// the other way round, and no entry is empty.
func TestCatalogsHaveTheSameKeys(t *testing.T) {
	en, zh := englishWords(), chineseWords()
	keys := func(m map[string]string) []string {
		var out []string
		for k, v := range m {
			if !platformFieldKey.MatchString(k) {
				out = append(out, k)
			}
			if strings.TrimSpace(v) == "" {
				t.Errorf("key %q has an empty entry", k)
			}
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff(keys(en), keys(zh)); diff != "" {
		t.Errorf("the catalogs' keys differ (-en +zh):\n%s", diff)
	}
	for k, v := range en {
		if strings.Count(v, "%") != strings.Count(zh[k], "%") {
			t.Errorf("key %q: the entries take different arguments: %q, %q", k, v, zh[k])
		}
	}
}

// TestEveryConfigFieldInChinese: every config field of every built-in
// platform that describes its fields has its label and help in Chinese,
// and the Chinese catalog has no words for a field that does not exist.
func TestEveryConfigFieldInChinese(t *testing.T) {
	zh := chineseWords()
	want := map[string]bool{}
	for name, pl := range builtin.Platforms(nil) {
		d, ok := pl.(push.ConfigDescriber)
		if !ok {
			continue
		}
		for _, f := range d.ConfigFields() {
			for _, part := range []string{"label", "help"} {
				k := "field." + name + "." + f.Name + "." + part
				want[k] = true
				if strings.TrimSpace(zh[k]) == "" {
					t.Errorf("%s: no Chinese words", k)
				}
			}
		}
	}
	for k := range zh {
		if platformFieldKey.MatchString(k) && !want[k] {
			t.Errorf("%s: words for a field no platform has", k)
		}
	}
	if len(want) < 2*40 {
		t.Fatalf("%d field keys: the platforms describe too few fields", len(want))
	}
}

// TestEveryKeyIsInTheCatalog: every key a template or a handler names,
// and every key made from the engine's values (states, kinds, roles…), is
// in the catalog; a missing one would show as its key on a page.
func TestEveryKeyIsInTheCatalog(t *testing.T) {
	en := englishWords()
	var used []string
	tmplKey := regexp.MustCompile(`\.T "([a-z0-9_.]+)"`)
	err := fs.WalkDir(templateFS, "templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(templateFS, path)
		for _, m := range tmplKey.FindAllStringSubmatch(string(b), -1) {
			used = append(used, m[1])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	goKey := regexp.MustCompile(`(?:lang\.t|newFrame\(q,) ?\(?"([a-z0-9_.]+)"`)
	doneKey := regexp.MustCompile(`redirect\([^,]+, "([a-z_]+)"\)`)
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goKey.FindAllStringSubmatch(string(b), -1) {
			used = append(used, m[1])
		}
		for _, m := range doneKey.FindAllStringSubmatch(string(b), -1) {
			used = append(used, "done."+m[1])
		}
	}
	for _, s := range push.States() {
		used = append(used, "state."+string(s))
	}
	for _, k := range []push.LedgerKind{push.LedgerCharge, push.LedgerRefund, push.LedgerAdjust, push.LedgerInitial, push.LedgerGrant, push.LedgerSummary} {
		used = append(used, "ledger."+string(k))
	}
	used = append(used, "type.user", "type.group", "role.member", "role.operator", "status.active", "status.suspended",
		"done.account_active", "done.account_suspended", "format.text", "format.markdown", "format.image")
	if len(used) < 150 {
		t.Fatalf("found only %d keys in use: the scan is broken", len(used))
	}
	for _, k := range used {
		if _, ok := en[k]; !ok && !strings.HasSuffix(k, ".") {
			t.Errorf("key %q is used but not in the catalog", k)
		}
	}
}

// TestLanguageChoice: the remembered switch wins, then the best
// Accept-Language, then English.
func TestLanguageChoice(t *testing.T) {
	ls := newLanguages()
	for _, tc := range []struct{ name, accept, cookie, want string }{
		{"nothing", "", "", "en"},
		{"chinese", "zh-CN,zh;q=0.9,en;q=0.8", "", "zh"},
		{"english first", "en-US,en;q=0.9,zh;q=0.5", "", "en"},
		{"chinese preferred by weight", "en;q=0.3, zh-TW;q=0.8", "", "zh"},
		{"unknown language", "fr-FR", "", "en"},
		{"the switch wins", "zh-CN", "en", "en"},
		{"a bad cookie is ignored", "zh-CN", "xx", "zh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.accept != "" {
				r.Header.Set("Accept-Language", tc.accept)
			}
			if tc.cookie != "" {
				r.Header.Set("Cookie", langCookie+"="+tc.cookie)
			}
			if got := ls.of(r).Code; got != tc.want {
				t.Errorf("language %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLocalPath: the language switch and sign-in go back only to a path
// on this server.
func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/jobs?state=failed": "/jobs?state=failed", "": "/", "//evil.example/": "/", "/\\evil.example": "/",
		"https://evil.example/": "/", "javascript:alert(1)": "/", "/a\r\nSet-Cookie: x": "/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}
