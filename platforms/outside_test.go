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
// message through each. It fails when that module does not build as it
// is, its go.sum included (-mod=readonly, no workspace), or when the
// program does not print "ok".
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
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = filepath.Join("testdata", "outside")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.Join(keep, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in %s: %v\n%s", cmd.Dir, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "ok" {
		t.Fatalf("go run in %s printed %q, want \"ok\"", cmd.Dir, got)
	}
}
