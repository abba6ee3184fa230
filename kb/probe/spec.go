package probe

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// Match modes: what makes an object one the probe records.
const (
	// MatchPresent records the objects where the path reaches a value on some branch.
	MatchPresent = "present"
	// MatchAbsent records the objects where the path falls short on some branch (Missing).
	MatchAbsent = "absent"
)

// Spec is one probe as a bundle declares it (see inventory.ProbeSpec): which objects to
// look at, the path to look for, and what to record. It is data, so a bundle can ship the
// observations its rules need.
type Spec = inventory.ProbeSpec

var idRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Validate says what is wrong with a declared probe, naming the field.
func Validate(s Spec) error {
	if !idRE.MatchString(s.ID) {
		return fmt.Errorf("id %q: want lower-case letters, digits and '-', at most 63", s.ID)
	}
	if s.PodTemplate == (len(s.Kinds) > 0) {
		return fmt.Errorf("probe %s: give either kinds or podTemplate: true", s.ID)
	}
	for i, k := range s.Kinds {
		if _, _, err := SplitKind(k); err != nil {
			return fmt.Errorf("probe %s: kinds[%d]: %w", s.ID, i, err)
		}
		if slices.Contains(s.Kinds[:i], k) {
			return fmt.Errorf("probe %s: kinds[%d]: %s listed twice", s.ID, i, k)
		}
		if k == "core/Secret" {
			return fmt.Errorf("probe %s: kinds[%d]: probes may not read Secrets: what they find is copied into inventories, which agents push and servers keep", s.ID, i)
		}
	}
	if _, err := ParsePath(s.Path); err != nil {
		return fmt.Errorf("probe %s: %w", s.ID, err)
	}
	if s.Match != "" && s.Match != MatchPresent && s.Match != MatchAbsent {
		return fmt.Errorf("probe %s: match %q: want %s or %s", s.ID, s.Match, MatchPresent, MatchAbsent)
	}
	if err := validateFilters(s); err != nil {
		return fmt.Errorf("probe %s: %w", s.ID, err)
	}
	return validateBounds(s)
}

// validateFilters checks equals, prefixes, unless and strictInvalid: value filters of a
// present-mode probe.
func validateFilters(s Spec) error {
	filtered := len(s.Equals)+len(s.Prefixes)+len(s.Unless) > 0 || s.StrictInvalid != ""
	if filtered && s.Match == MatchAbsent {
		return fmt.Errorf("equals, prefixes, unless and strictInvalid filter found values; an absent-mode probe finds none")
	}
	if s.StrictInvalid != "" && s.StrictInvalid != StrictIP && s.StrictInvalid != StrictCIDR {
		return fmt.Errorf("strictInvalid %q: want %s or %s", s.StrictInvalid, StrictIP, StrictCIDR)
	}
	for name, list := range map[string][]string{"equals": s.Equals, "prefixes": s.Prefixes, "unless": s.Unless} {
		for i, v := range list {
			if v == "" {
				return fmt.Errorf("%s[%d]: empty", name, i)
			}
		}
	}
	for _, v := range s.Unless {
		if slices.Contains(s.Equals, v) {
			return fmt.Errorf("unless: %q is also in equals", v)
		}
	}
	return nil
}

// validateBounds keeps a declaration within what the inventory's schema accepts, so an
// inventory observing it is never refused where it is read (eval, a server's ingest).
func validateBounds(s Spec) error {
	const maxItems, maxLen = 100, inventory.MaxStringLength
	if len(s.Path) > maxLen {
		return fmt.Errorf("probe %s: path: longer than %d bytes", s.ID, maxLen)
	}
	for name, list := range map[string][]string{"kinds": s.Kinds, "equals": s.Equals, "prefixes": s.Prefixes, "unless": s.Unless} {
		if len(list) > maxItems {
			return fmt.Errorf("probe %s: %s: more than %d", s.ID, name, maxItems)
		}
		for i, v := range list {
			if len(v) > maxLen {
				return fmt.Errorf("probe %s: %s[%d]: longer than %d bytes", s.ID, name, i, maxLen)
			}
		}
	}
	return nil
}

// Normal is the spec with its defaults spelled out, the form observations carry so the
// engine can tell an observation of this very probe from one of an older declaration.
func Normal(s Spec) Spec {
	if s.Match == "" {
		s.Match = MatchPresent
	}
	return s
}

// SplitKind splits "<group>/<Kind>" ("core" is the core group).
func SplitKind(k string) (group, kind string, err error) {
	group, kind, ok := strings.Cut(k, "/")
	if !ok || group == "" || kind == "" || strings.Contains(kind, "/") {
		return "", "", fmt.Errorf("kind %q: want <group>/<Kind>, core/<Kind> for the core group", k)
	}
	if group == "core" {
		group = ""
	}
	return group, kind, nil
}

// KindKey is the "<group>/<Kind>" key of an object's group and kind.
func KindKey(group, kind string) string {
	if group == "" {
		group = "core"
	}
	return group + "/" + kind
}

// templates are where each workload keeps its pod template, by "<group>/<Kind>": the fields
// leading to the template's parent of metadata and spec (none for a Pod).
var templates = map[string][]string{
	"core/Pod":                   nil,
	"core/ReplicationController": {"spec", "template"},
	"apps/Deployment":            {"spec", "template"},
	"apps/DaemonSet":             {"spec", "template"},
	"apps/StatefulSet":           {"spec", "template"},
	"apps/ReplicaSet":            {"spec", "template"},
	"extensions/Deployment":      {"spec", "template"},
	"extensions/DaemonSet":       {"spec", "template"},
	"extensions/ReplicaSet":      {"spec", "template"},
	"batch/Job":                  {"spec", "template"},
	"batch/CronJob":              {"spec", "jobTemplate", "spec", "template"},
}

// TemplatePath answers the fields leading to a workload's pod template, and whether objects
// of this group and kind have one.
func TemplatePath(group, kind string) ([]string, bool) {
	p, ok := templates[KindKey(group, kind)]
	return p, ok
}

// TemplateKinds are the "<group>/<Kind>" keys of every workload with a pod template.
func TemplateKinds() []string {
	return slices.Sorted(maps.Keys(templates))
}

// Equal says whether two declarations observe the same thing, defaults spelled out.
func Equal(a, b Spec) bool {
	a, b = Normal(a), Normal(b)
	return a.ID == b.ID && slices.Equal(a.Kinds, b.Kinds) && a.PodTemplate == b.PodTemplate &&
		a.Path == b.Path && a.Match == b.Match && a.Values == b.Values &&
		slices.Equal(a.Equals, b.Equals) && slices.Equal(a.Prefixes, b.Prefixes) && slices.Equal(a.Unless, b.Unless) &&
		a.StrictInvalid == b.StrictInvalid
}
