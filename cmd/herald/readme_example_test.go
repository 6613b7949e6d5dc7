package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
)

// TestREADMEEmbeddingExample builds the Go program of the README's
// "Embedding" section against the code as it is, so the example cannot
// drift from the API, and runs it twice on one database against a fake
// Bot API server: the first run delivers the message, the second finds
// the bot and the chat of the first and sends nothing again.
func TestREADMEEmbeddingExample(t *testing.T) {
	dir := readmeProgram(t, "## Embedding")
	bin := filepath.Join(t.TempDir(), "example")
	if out, err := exec.Command("go", "build", "-o", bin, "./"+filepath.ToSlash(dir)).CombinedOutput(); err != nil {
		t.Fatalf("the README's embedding example does not build: %v\n%s", err, out)
	}

	tg := fake.NewTelegram(t)
	tg.AddChat("123456789")
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	token := tg.NewBot()
	work := t.TempDir() // herald.db is made here
	run := func() string {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HERALD_SECRET_KEY="+base64.StdEncoding.EncodeToString(key),
			"TELEGRAM_TOKEN="+token, "TELEGRAM_API_BASE="+tg.URL(), "TELEGRAM_CHAT=123456789")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the README's embedding example failed: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	first := run()
	jobID, ok := strings.CutPrefix(first, "delivered as job ")
	if !ok || !strings.HasSuffix(jobID, " replayed: false") {
		t.Fatalf("the first run printed %q, want a delivered job, not replayed", first)
	}
	jobID = strings.TrimSuffix(jobID, " replayed: false")
	if second := run(); second != "delivered as job "+jobID+" replayed: true" {
		t.Errorf("the second run printed %q, want the first run's job %s replayed", second, jobID)
	}
	msgs := tg.Messages()
	if len(msgs) != 1 || msgs[0].ChatID != "123456789" || !strings.Contains(msgs[0].Text, "deployed") {
		t.Errorf("the Bot API server received %+v, want one message to chat 123456789", msgs)
	}
}

// TestREADMEClientExampleBuilds vets the Go program of the README's client
// section against the code as it is.
func TestREADMEClientExampleBuilds(t *testing.T) {
	readmeProgram(t, "## Go client and `herald send`")
}

// readmeProgram writes the first Go code block of a README section into a
// directory of the module, vets it, and returns the directory.
func readmeProgram(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, heading)
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	section = section[i:]
	_, block, ok := strings.Cut(section, "```go\n")
	src, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatalf("the README section %q has no Go code block", heading)
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
	if out, err := exec.Command("go", "vet", "./"+filepath.ToSlash(dir)).CombinedOutput(); err != nil {
		t.Fatalf("the Go program of the README section %q does not pass go vet: %v\n%s\n%s", heading, err, out, src)
	}
	return dir
}
