package main

import (
	"errors"
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
	_, block, ok := strings.Cut(section, "```go\n")
	src, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("the Embedding section has no Go code block")
	}
	// A directory inside the module (testdata is skipped by ./...), so the
	// example builds against this tree without a module of its own; removed
	// again when this test made it.
	if _, err := os.Stat("testdata"); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove("testdata") })
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
