package platforms_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsideModule runs testdata/outside, a program in a module of its
// own (which may import no internal package of Herald's) that builds an
// engine with a built-in provider and a provider of its own and sends a
// message through each, and whose own test checks its code with package
// pushtest. It fails when that module does not build as it is, its go.sum
// included (-mod=readonly, no workspace), when the program does not print
// "ok", or when its test fails.
//
// Its go.sum is a subset of Herald's: when Herald's requirements change,
// copy Herald's go.sum there and run GOWORK=off go mod tidy in it.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds another module")
	}
	flags, err := exec.Command("go", "env", "GOFLAGS").Output()
	if err != nil {
		t.Fatalf("go env GOFLAGS: %v", err)
	}
	keep := []string{"-mod=readonly"}
	for _, f := range strings.Fields(string(flags)) {
		if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "-modfile=") {
			keep = append(keep, f)
		}
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.Join(keep, " "))
	dir := filepath.Join("testdata", "outside")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	if got := strings.TrimSpace(run("run", ".")); got != "ok" {
		t.Fatalf("go run in %s printed %q, want \"ok\"", dir, got)
	}
	// -v: the test must have run its tests, not found none.
	out := run("test", "-count=1", "-v", ".")
	for _, name := range []string{"TestDeployed", "TestDeployedOnce"} {
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			t.Errorf("go test in %s did not pass %s:\n%s", dir, name, out)
		}
	}
}
