package httpcall

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		value string
		min   time.Duration
		max   time.Duration
	}{
		{"", 0, 0},
		{"3", 3 * time.Second, 3 * time.Second},
		{"-5", 0, 0},
		{"soon", 0, 0},
		{"86400", time.Hour, time.Hour},
		{time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat), 8 * time.Second, 10 * time.Second},
		{time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat), 0, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.value != "" {
			h.Set("Retry-After", tt.value)
		}
		if got := RetryAfter(h); got < tt.min || got > tt.max {
			t.Errorf("RetryAfter(%q) = %s, want %s to %s", tt.value, got, tt.min, tt.max)
		}
	}
}
