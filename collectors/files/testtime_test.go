package files

import "time"

var testTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
