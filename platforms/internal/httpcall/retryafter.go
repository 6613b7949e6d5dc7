package httpcall

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter caps a platform's wait hint.
const maxRetryAfter = time.Hour

// RetryAfter reads a Retry-After header, in seconds or as an HTTP date,
// and returns 0 when there is none (or it is unreadable or past).
func RetryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	switch {
	case d < 0:
		return 0
	case d > maxRetryAfter:
		return maxRetryAfter
	}
	return d
}
