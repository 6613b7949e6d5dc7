package storage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

// TestCheckpointerCopiesTheWAL: on SQLite, committed pages reach the
// database file within moments, copied from the WAL by the store's
// checkpointer beside the writer; a commit checkpoints only at 10,000
// pages (40 MB), far more than written here.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "herald.db")
	s := open(t, path)
	a, b, tg := seed(t, s, 100)
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size(path)
	const written = 300 * 2000 // 300 jobs of 2,000 characters: ~150 pages
	for i := 0; i < 10; i++ {
		var jobs []*push.Job
		for k := 0; k < 30; k++ {
			jobs = append(jobs, newJob(a, b, tg, strings.Repeat(string(rune('a'+k%26)), 2000)))
		}
		createJobs(t, s, jobs...)
	}
	if w := size(path + "-wal"); w < written {
		t.Fatalf("the WAL holds %d bytes after %d were committed", w, written)
	}
	deadline := time.Now().Add(5 * time.Second)
	for size(path) < before+written {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 5 s after %d bytes were committed (from %d): the WAL was not checkpointed", size(path), written, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
