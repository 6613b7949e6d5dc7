package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// runBin runs the herald binary with extra environment and returns its exit
// code, stdout and stderr.
func runBin(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(heraldBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestAdminRefusesAMissingDatabase: a mistyped --db is refused, naming
// the setting as the user gave it, and creates nothing.
func TestAdminRefusesAMissingDatabase(t *testing.T) {
	tests := []struct {
		name string
		env  func(db string) []string
		args func(db string) []string
		want func(db string) string
	}{
		{"flag", func(string) []string { return nil },
			func(db string) []string { return []string{"admin", "account", "list", "--db", db} },
			func(db string) string { return "--db " + db + ": no such database file" }},
		{"environment", func(db string) []string { return []string{"HERALD_DB=" + db} },
			func(string) []string { return []string{"admin", "account", "list"} },
			func(db string) string { return "HERALD_DB=" + db + ": no such database file" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "typo.db")
			code, out, errOut := runBin(t, tt.env(db), tt.args(db)...)
			if code != 1 || out != "" || !strings.Contains(errOut, tt.want(db)) || !strings.Contains(errOut, "herald migrate creates one") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tt.want(db))
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("a refused admin command left files: %v", entries)
			}
		})
	}
}

// TestOneServerPerSQLiteFile: serve creates its database 0600 and says
// so; a second serve on the same file is refused, naming the file and the
// process that serves it, while admin and migrate work beside the first.
func TestOneServerPerSQLiteFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "herald.db")
	env := []string{"HERALD_DB=" + db}
	first := testkit.StartServe(t, heraldBin, env)
	if !strings.Contains(first.Output(), "created a new SQLite database") {
		t.Fatalf("serve did not say it created the database:\n%s", first.Output())
	}
	for _, name := range []string{"herald.db", "herald.db-wal", "herald.db.key", "herald.db.lock"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, perm)
		}
	}

	code, out, errOut := runBin(t, env, "serve", "--addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "HERALD_DB="+db) || !strings.Contains(errOut, "another herald serve (pid ") ||
		!strings.Contains(errOut, "stop it first") {
		t.Fatalf("second serve: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", "beside")
	if code, out, errOut := runBin(t, env, "migrate"); code != 0 || !strings.Contains(out, `"migrations"`) {
		t.Fatalf("migrate beside serve: exit %d %s %s", code, out, errOut)
	}
	// The first server still serves.
	if r := first.CallRoot(t, "GET", "/readyz"); r.Status != 200 {
		t.Fatalf("first server after the refused second: %d %s", r.Status, r.Body)
	}
}

// TestSecretKeyErrorsNameTheSetting: a key file error names the setting
// the user gave (--secret-key-file, or the --db the default file lives
// beside), and says when HERALD_SECRET_KEY overrode a file.
func TestSecretKeyErrorsNameTheSetting(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, db string) (env, args []string)
		want  string
	}{
		{"named file readable by others", func(t *testing.T, dir, db string) ([]string, []string) {
			k := filepath.Join(dir, "other.key")
			writeFile(t, k, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", 0o644)
			return nil, []string{"--secret-key-file", k}
		}, "--secret-key-file {dir}/other.key: the file can be read by other users (mode -rw-r--r--): chmod 600 it"},
		{"default file readable by others", func(t *testing.T, dir, db string) ([]string, []string) {
			writeFile(t, db+".key", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", 0o644)
			return nil, nil
		}, "the secret key file {dir}/h.db.key (beside --db {dir}/h.db; --secret-key-file names another): the file can be read by other users"},
		{"environment over a file", func(t *testing.T, dir, db string) ([]string, []string) {
			return []string{"HERALD_SECRET_KEY=short"}, []string{"--secret-key-file", filepath.Join(dir, "never.key")}
		}, "HERALD_SECRET_KEY (it is set, so --secret-key-file {dir}/never.key is not read): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "h.db")
			if code, _, errOut := runBin(t, nil, "migrate", "--db", db); code != 0 {
				t.Fatalf("migrate: %s", errOut)
			}
			env, extra := tt.setup(t, dir, db)
			code, out, errOut := runBin(t, env, append([]string{"admin", "account", "list", "--db", db}, extra...)...)
			want := strings.ReplaceAll(tt.want, "{dir}", dir)
			if code != 1 || out != "" || !strings.Contains(errOut, want) {
				t.Fatalf("exit %d, stdout %q\nstderr %s\nwant it to contain %s", code, out, errOut, want)
			}
		})
	}
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
