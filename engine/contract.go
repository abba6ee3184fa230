package engine

import (
	"encoding/json"
	"fmt"
)

// contractError names the pack of the first finding the report package refused and shows it,
// so its author sees which field is wrong.
func contractError(invalid []map[string]any) error {
	f := invalid[0]
	pack, _ := f["pack"].(string)
	if pack == "" {
		pack = "built-in"
	}
	delete(f, "pack")
	shown, _ := json.Marshal(f)
	return fmt.Errorf("policy %s breaks the findings contract (%d finding(s)); first: %s; "+
		"a finding needs a string key starting with its category, a title, a target from input.targets "+
		"and a severity of blocker, warning or info", pack, len(invalid), shown)
}
