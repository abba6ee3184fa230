// Package machine reads what the benchmark tools report about the machine they ran on.
package machine

import (
	"os"
	"strings"
)

// LoadAverage is the 1, 5 and 15 minute load averages from /proc/loadavg, or "unknown".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
