package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// invalidFinding is what the report package refused: the pack that made it, the rules of the
// findings contract it breaks, and the finding (or findings document) itself.
type invalidFinding struct {
	Pack     string   `json:"pack"`
	Problems []string `json:"problems"`
	Finding  any      `json:"finding"`
}

// contractError names the pack of the first finding the report package refused, the rules it
// breaks and shows it, so its author sees which field is wrong.
func contractError(invalid []invalidFinding) error {
	f := invalid[0]
	pack := f.Pack
	if pack == "" {
		pack = "built-in"
	}
	shown, _ := json.Marshal(f.Finding)
	return fmt.Errorf("policy %s breaks the findings contract (%d finding(s)); first: %s: %s; "+
		"a finding needs a string key starting with its category, a title, a target from input.targets "+
		"and a severity of blocker, warning or info, and its other fields the types the report reads",
		pack, len(invalid), strings.Join(f.Problems, ", "), shown)
}
