package tokencache

import (
	"context"
	"testing"
	"time"
)

// TestRefreshAhead checks when a cached token is fetched again: Early
// before expiry, or at half its whole life for tokens shorter than twice
// Early.
func TestRefreshAhead(t *testing.T) {
	tests := []struct {
		name    string
		life    time.Duration
		elapsed time.Duration
		refetch bool
	}{
		{"long token, well before expiry", 2 * time.Hour, time.Hour, false},
		{"long token, 6 min left", 2 * time.Hour, 114 * time.Minute, false},
		{"long token, 4 min left", 2 * time.Hour, 116 * time.Minute, true},
		{"short token, before half its life", time.Minute, 29 * time.Second, false},
		{"short token, past half its life", time.Minute, 31 * time.Second, true},
		{"expired", time.Minute, 2 * time.Minute, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			c := New(Options{Early: 5 * time.Minute, Now: func() time.Time { return now }})
			fetches := 0
			fetch := func(context.Context) (Token, error) {
				fetches++
				return Token{Value: "t", ExpiresAt: now.Add(tc.life)}, nil
			}
			if _, err := c.Get(context.Background(), "k", fetch); err != nil {
				t.Fatal(err)
			}
			now = now.Add(tc.elapsed)
			if _, err := c.Get(context.Background(), "k", fetch); err != nil {
				t.Fatal(err)
			}
			if got := fetches == 2; got != tc.refetch {
				t.Fatalf("fetched again: %v, want %v", got, tc.refetch)
			}
		})
	}
}
