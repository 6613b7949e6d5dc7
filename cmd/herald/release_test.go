package main

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the module's root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needTool finds a program the test needs: missing, it skips locally and
// fails in CI, which installs it.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: scripts/test installs it", name)
		}
		t.Skipf("%s is not installed (scripts/test installs it)", name)
	}
	return p
}

// gitHead is the commit the checkout is at, the revision a binary built
// from it must report.
func gitHead(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestReleaseBinary runs the release script for linux/amd64 and checks
// what it made: a static binary that reports the given version and the
// checkout's commit, listed with its true checksum; and that a plain
// `go build` binary reports the commit too, with no linker flags.
func TestReleaseBinary(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the suite runs the linux/amd64 release binary")
	}
	root := repoRoot(t)
	head := gitHead(t, root)
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "release"))
	cmd.Env = append(os.Environ(), "VERSION=v0.9.0-test", "TARGETS=linux/amd64", "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	bin := filepath.Join(out, "herald-v0.9.0-test-linux-amd64")

	t.Run("checksums", func(t *testing.T) {
		sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		want := hex.EncodeToString(sum[:]) + "  herald-v0.9.0-test-linux-amd64\n"
		if string(sums) != want {
			t.Fatalf("SHA256SUMS:\n%s\nwant:\n%s", sums, want)
		}
	})
	t.Run("static", func(t *testing.T) {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Fatalf("the release binary is dynamically linked (%v)", p.Type)
			}
		}
	})
	t.Run("version", func(t *testing.T) {
		got, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := "herald v0.9.0-test (commit " + head[:12]; !strings.HasPrefix(string(got), want) {
			t.Fatalf("version: %q, want it to start with %q", got, want)
		}
	})
	t.Run("plain go build", func(t *testing.T) {
		// heraldBin is built by TestMain with go build and no linker
		// flags (-buildvcs=auto, which GOFLAGS may have turned off).
		got, err := exec.Command(heraldBin, "version").Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), "(commit "+head[:12]) || !strings.Contains(string(got), runtime.Version()) {
			t.Fatalf("version of a plain build: %q, want the commit %s and %s", got, head[:12], runtime.Version())
		}
	})
	t.Run("systemd unit", func(t *testing.T) {
		analyze := needTool(t, "systemd-analyze")
		unit, err := os.ReadFile(filepath.Join(root, "deploy", "herald.service"))
		if err != nil {
			t.Fatal(err)
		}
		for _, hard := range []string{"DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=herald", "NoNewPrivileges=yes"} {
			if !bytes.Contains(unit, []byte("\n"+hard+"\n")) {
				t.Errorf("the unit lacks %s", hard)
			}
		}
		// verify checks that ExecStart's program exists: point it at the
		// binary just built.
		dir := t.TempDir()
		local := bytes.ReplaceAll(unit, []byte("/usr/local/bin/herald"), []byte(bin))
		path := filepath.Join(dir, "herald.service")
		if err := os.WriteFile(path, local, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := exec.Command(analyze, "verify", path).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(b)) > 0 {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, b)
		}
	})
}
