package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	_ "modernc.org/sqlite" // the snapshots of the tests' databases
)

// adminDB is a SQLite database that herald admin (and herald serve) run
// on, with the secrets no admin output may show.
type adminDB struct {
	path    string
	env     []string
	secrets []string
}

func newAdminDB(t *testing.T, env ...string) *adminDB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "herald.db")
	return &adminDB{path: path, env: append([]string{"HERALD_DB=" + path}, env...)}
}

// secret adds a string no admin output may contain.
func (d *adminDB) secret(s ...string) { d.secrets = append(d.secrets, s...) }

// exec runs herald admin args with stdin (nil: none) and checks that
// neither its stdout nor its stderr shows a secret.
func (d *adminDB) exec(t *testing.T, stdin []byte, args ...string) testkit.AdminResult {
	t.Helper()
	var r testkit.AdminResult
	if stdin == nil {
		r = testkit.Admin(t, heraldBin, d.env, args...)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, heraldBin, append([]string{"admin"}, args...)...)
		cmd.Env = append(os.Environ(), d.env...)
		cmd.Stdin = bytes.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("herald admin %v: %v", args, err)
		}
		r.Stdout, r.Stderr = stdout.String(), stderr.String()
	}
	for _, s := range d.secrets {
		if s != "" && strings.Contains(r.Stdout+r.Stderr, s) {
			t.Fatalf("herald admin %v printed a secret", args)
		}
	}
	return r
}

// run runs an admin command that must succeed and returns its object.
func (d *adminDB) run(t *testing.T, args ...string) map[string]any {
	t.Helper()
	return d.must(t, nil, args...)
}

// must runs an admin command with stdin that must succeed.
func (d *adminDB) must(t *testing.T, stdin []byte, args ...string) map[string]any {
	t.Helper()
	r := d.exec(t, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("herald admin %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return r.JSON(t)
}

// refused runs an admin command that must fail: exit 1, nothing on
// stdout, and each of want in its message. It returns the message.
func (d *adminDB) refused(t *testing.T, stdin []byte, args []string, want ...string) string {
	t.Helper()
	r := d.exec(t, stdin, args...)
	if r.Code != 1 || r.Stdout != "" {
		t.Fatalf("herald admin %v: exit %d, stdout %q, stderr %q; want exit 1 and nothing on stdout", args, r.Code, r.Stdout, r.Stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Fatalf("herald admin %v: stderr %q lacks %q", args, r.Stderr, w)
		}
	}
	return r.Stderr
}

// itemsOf returns a list command's items.
func itemsOf(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	raw, ok := out["items"].([]any)
	if !ok {
		t.Fatalf("no items in %v", out)
	}
	var list []map[string]any
	for _, it := range raw {
		list = append(list, it.(map[string]any))
	}
	return list
}

// ids returns the ids of a list's items, in order.
func ids(list []map[string]any) []string {
	out := []string{}
	for _, it := range list {
		id, ok := it["id"]
		if !ok {
			id = it["jobId"]
		}
		out = append(out, fmt.Sprint(id))
	}
	return out
}

// snapshot reads every row of every table of the database, in order, as
// text: two snapshots are equal when the database did not change.
func (d *adminDB) snapshot(t *testing.T) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+d.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "%s %v\n", table, cols)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					vals[i] = string(bs)
				}
			}
			data, _ := json.Marshal(vals)
			b.Write(data)
			b.WriteByte('\n')
		}
		rows.Close()
	}
	return b.String()
}
