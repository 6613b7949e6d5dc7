package main

import (
	"strings"
	"testing"
)

// TestParseFlagsTwins: a flag named in withEnv takes its environment twin
// (the command line wins) and its usage names the twin; any other flag
// does neither.
func TestParseFlagsTwins(t *testing.T) {
	t.Setenv("HERALD_RATE_LIMIT", "7")
	t.Setenv("HERALD_SYNC_WAIT", "1s")
	t.Setenv("HERALD_DB", "elsewhere.db")
	var help strings.Builder
	fs := newFlagSet("test")
	var ef engineFlags
	ef.register(fs)
	err := parseFlags(fs, []string{"--sync-wait", "2s"}, map[string]string{"rate-limit": envName("rate-limit"), "sync-wait": envName("sync-wait")})
	if err != nil {
		t.Fatal(err)
	}
	if ef.rateLimit != 7 || ef.syncWait.String() != "2s" || ef.db != "herald.db" {
		t.Fatalf("--rate-limit %d, --sync-wait %s, --db %q; want 7 (twin), 2s (command line), herald.db (no twin)", ef.rateLimit, ef.syncWait, ef.db)
	}
	fs.SetOutput(&help)
	fs.PrintDefaults()
	for _, twin := range []string{"(env HERALD_RATE_LIMIT)", "(env HERALD_SYNC_WAIT)"} {
		if !strings.Contains(help.String(), twin) {
			t.Errorf("the usage does not name %s:\n%s", twin, help.String())
		}
	}
	if strings.Contains(help.String(), "HERALD_DB") {
		t.Errorf("the usage names HERALD_DB, which --db does not take here:\n%s", help.String())
	}
}
