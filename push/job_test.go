package push

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCanMove(t *testing.T) {
	all := States()
	legal := map[[2]State]bool{
		{StateQueued, StateRunning}:      true,
		{StateQueued, StateCanceled}:     true,
		{StateQueued, StateExpired}:      true,
		{StateRunning, StateSucceeded}:   true,
		{StateRunning, StateFailed}:      true,
		{StateRunning, StateUncertain}:   true,
		{StateUncertain, StateSucceeded}: true,
		{StateUncertain, StateFailed}:    true,
	}
	for _, from := range all {
		for _, to := range all {
			if got, want := CanMove(from, to), legal[[2]State{from, to}]; got != want {
				t.Errorf("CanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestStatePredicates(t *testing.T) {
	tests := []struct {
		s                                State
		pending, settled, final, refunds bool
	}{
		{StateQueued, true, false, false, false},
		{StateRunning, true, false, false, false},
		{StateSucceeded, false, true, true, false},
		{StateFailed, false, true, true, false},
		{StateCanceled, false, true, true, true},
		{StateExpired, false, true, true, true},
		{StateUncertain, false, true, false, false},
	}
	for _, tt := range tests {
		if tt.s.Pending() != tt.pending || tt.s.Settled() != tt.settled || tt.s.Final() != tt.final || tt.s.Refunds() != tt.refunds {
			t.Errorf("%s: pending=%v settled=%v final=%v refunds=%v", tt.s, tt.s.Pending(), tt.s.Settled(), tt.s.Final(), tt.s.Refunds())
		}
	}
}

func TestJobSuccess(t *testing.T) {
	for s, want := range map[State]string{
		StateQueued: "null", StateRunning: "null", StateUncertain: "null",
		StateSucceeded: "true", StateFailed: "false", StateCanceled: "false", StateExpired: "false",
	} {
		got := "null"
		if p := (Job{State: s}).Success(); p != nil {
			got = map[bool]string{true: "true", false: "false"}[*p]
		}
		if got != want {
			t.Errorf("Job{State: %s}.Success() = %s, want %s", s, got, want)
		}
	}
}

func TestNewJobID(t *testing.T) {
	seen := make(map[string]bool)
	prev := ""
	for i := 0; i < 1000; i++ {
		before := time.Now().UnixMilli()
		id := NewJobID()
		after := time.Now().UnixMilli()
		if !ValidJobID(id) {
			t.Fatalf("NewJobID() = %q, not a valid job id", id)
		}
		if id[14] != '7' || strings.IndexByte("89ab", id[19]) < 0 {
			t.Fatalf("NewJobID() = %q, not a version 7 variant 1 UUID", id)
		}
		ms, err := strconv.ParseInt(strings.ReplaceAll(id[:13], "-", ""), 16, 64)
		if err != nil || ms < before || ms > after {
			t.Fatalf("NewJobID() = %q: its time %d (%v) is not the time it was made, %d to %d ms", id, ms, err, before, after)
		}
		if prev != "" && id[:13] < prev[:13] {
			t.Fatalf("NewJobID() = %q after %q: ids do not sort by time", id, prev)
		}
		if seen[id] {
			t.Fatalf("NewJobID() repeated %q", id)
		}
		seen[id] = true
		prev = id
	}
}

func TestValidJobID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d10", true},
		{"0B6C7E02-4D0E-4C55-9A7A-3C1B2F1E9D10", true},
		{"", false},
		{"0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d1", false},
		{"0b6c7e02x4d0e-4c55-9a7a-3c1b2f1e9d10", false},
		{"0b6c7e02-4d0e-4c55-9a7a-3c1b2f1e9d1g", false},
		{"../../../../etc/passwd-aaaaaaaaaaaaa", false},
	}
	for _, tt := range tests {
		if got := ValidJobID(tt.in); got != tt.want {
			t.Errorf("ValidJobID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestStates: States lists each valid state once, and the settled ones are
// those a job ends in or waits for verification in.
func TestStates(t *testing.T) {
	seen := map[State]bool{}
	var settled []State
	for _, s := range States() {
		if !s.Valid() || seen[s] {
			t.Fatalf("States lists %q twice or invalid", s)
		}
		seen[s] = true
		if s.Settled() {
			settled = append(settled, s)
		}
	}
	if len(seen) != 7 {
		t.Fatalf("States lists %d states, want the 7 of the contract", len(seen))
	}
	if diff := cmp.Diff([]State{StateSucceeded, StateFailed, StateCanceled, StateExpired, StateUncertain}, settled); diff != "" {
		t.Fatalf("settled states (-want +got):\n%s", diff)
	}
}
