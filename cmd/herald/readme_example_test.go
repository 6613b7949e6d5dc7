package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEEmbeddingExampleBuilds compiles the Go program of the README's
// "Embedding" section against the code as it is, so the example cannot
// drift from the API.
func TestREADMEEmbeddingExampleBuilds(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, "## Embedding")
	if i < 0 {
		t.Fatal("README.md has no Embedding section")
	}
	section = section[i:]
	start := strings.Index(section, "```go\n")
	end := strings.Index(section[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the Embedding section has no Go code block")
	}
	src := section[start+6 : start+6+end]
	// A directory inside the module (testdata is skipped by ./...), so the
	// example builds against this tree without a module of its own.
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "readme-example-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's embedding example does not build: %v\n%s\n%s", err, out, src)
	}
}
