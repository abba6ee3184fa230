package engine

import (
	"fmt"
	"strings"
)

var severities = map[string]bool{SeverityBlocker: true, SeverityWarning: true, SeverityInfo: true}

// checkContract refuses findings a pack produced without the fields every output needs.
func checkContract(lists ...[]Finding) error {
	for _, fs := range lists {
		for _, f := range fs {
			if err := checkFinding(f); err != nil {
				pack := f.Pack
				if pack == "" {
					pack = "built-in"
				}
				return fmt.Errorf("policy %s breaks the findings contract: finding %q: %w", pack, f.Key, err)
			}
		}
	}
	return nil
}

func checkFinding(f Finding) error {
	var missing []string
	for name, v := range map[string]string{"key": f.Key, "category": f.Category, "title": f.Title, "target": f.Target} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(sortedCopy(missing), ", "))
	}
	if !severities[f.Severity] {
		return fmt.Errorf("severity %q is not one of blocker, warning, info", f.Severity)
	}
	if !strings.HasPrefix(f.Key, f.Category) {
		return fmt.Errorf("key must start with its category %q", f.Category)
	}
	return nil
}
