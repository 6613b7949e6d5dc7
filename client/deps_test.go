package client_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStandardLibraryOnly fails when the client imports anything outside
// the standard library: programs that talk to a Herald server take it
// without the server's dependencies.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var outside []string
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/heraldpush/herald/client" {
			outside = append(outside, p)
		}
	}
	if len(outside) > 0 {
		t.Fatalf("the client imports packages outside the standard library: %v", outside)
	}
}

// TestReasonsAreTheServers checks that every Reason the client exports is
// one the server gives: its value appears as a string in the server's
// code (push, transport or storage).
func TestReasonsAreTheServers(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "reason.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var server strings.Builder
	for _, dir := range []string{"../push", "../transport", "../storage"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			server.Write(data)
		}
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		n++
		v, _ := strconv.Unquote(lit.Value)
		if !strings.Contains(server.String(), strconv.Quote(v)) {
			t.Errorf("%s = %q: the server never gives this reason", vs.Names[0].Name, v)
		}
		return true
	})
	if n < 20 {
		t.Fatalf("read %d reasons from reason.go", n)
	}
}
