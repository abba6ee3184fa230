// Package report links no OPA.
package report

import "strings"

// S is a string.
var S = strings.ToUpper("ready")
