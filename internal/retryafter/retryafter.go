// Package retryafter reads an HTTP Retry-After header, the one reading every client of this
// project (the agent's pushes, the notification worker, the gate client) shares.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads v, delay-seconds or an HTTP date, as a wait from now within [0, limit]; false
// when v is absent or unreadable. A date already past is a wait of 0.
func Parse(v string, now time.Time, limit time.Duration) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0, true
		}
		// Capped before multiplying: a huge value must not overflow into a short wait.
		return time.Duration(min(secs, int64(limit/time.Second))) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), limit), true
	}
	return 0, false
}
