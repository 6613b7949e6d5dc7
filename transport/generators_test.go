package transport_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// envNPM names the npm prefix where scripts/test installs
// openapi-typescript and typescript.
const envNPM = "HERALD_TEST_NPM"

// TestOpenAPIGenerators: code generators take the OpenAPI document as it
// is. oapi-codegen, at the version testdata/generators/go.mod pins, makes
// a Go client with its default options that compiles (two spellings of a
// field, or an operation whose answer type has a schema's name, would
// each declare one name twice); openapi-typescript's types type-check.
func TestOpenAPIGenerators(t *testing.T) {
	if testing.Short() {
		t.Skip("runs code generators (go tool, node): not in -short")
	}
	h := testkit.New(t, testkit.WithoutStart())
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join("testdata", "generators", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), h.API.OpenAPI(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	t.Run("oapi-codegen", func(t *testing.T) {
		run(t, "go", "tool", "oapi-codegen", "-package", "heraldclient", "-generate", "types,client", "-o", "client.gen.go", "openapi.json")
		run(t, "go", "vet", ".")
	})
	t.Run("openapi-typescript", func(t *testing.T) {
		npm := os.Getenv(envNPM)
		if npm == "" {
			t.Skipf("%s is not set: scripts/test installs openapi-typescript and typescript there", envNPM)
		}
		bin := filepath.Join(npm, "node_modules", ".bin")
		run(t, filepath.Join(bin, "openapi-typescript"), "openapi.json", "-o", "api.d.ts")
		run(t, filepath.Join(bin, "tsc"), "--noEmit", "--strict", "api.d.ts")
	})
}
