package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// heraldBin is the binary built once for this package's tests.
var heraldBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "herald-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	heraldBin, err = testkit.BuildHerald(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
