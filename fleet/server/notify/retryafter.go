package notify

import (
	"time"

	"github.com/upgradescope/upgradescope/internal/retryafter"
)

// retryAfter reads a Retry-After header as a wait from now capped at MaxRetryAfter; 0 when
// absent, unreadable or already past.
func retryAfter(v string, now time.Time) time.Duration {
	d, _ := retryafter.Parse(v, now, MaxRetryAfter)
	return d
}
