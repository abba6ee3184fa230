package server

import (
	"fmt"
	"path"

	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// TeamRule gives the namespaces matching Pattern (a path.Match glob) to Team.
type TeamRule struct {
	Pattern string `json:"pattern"`
	Team    string `json:"team"`
}

// TeamMap is --team-map: rules tried in order, the first match wins over the namespace's
// team label.
type TeamMap []TeamRule

// maxTeamMapBytes bounds a --team-map file.
const maxTeamMapBytes = 1 << 20

// LoadTeamMap reads a --team-map YAML file: a list of {pattern, team}.
func LoadTeamMap(file string) (TeamMap, error) {
	data, err := smallfile.Read(file, maxTeamMapBytes)
	if err != nil {
		return nil, fmt.Errorf("--team-map: %w", err)
	}
	var m TeamMap
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return nil, fmt.Errorf("--team-map %s: %w", file, err)
	}
	for i, r := range m {
		switch {
		case r.Pattern == "" || r.Team == "":
			return nil, fmt.Errorf("--team-map %s: entry %d: pattern and team are both required", file, i+1)
		case r.Team == report.Unattributed:
			return nil, fmt.Errorf("--team-map %s: entry %d: %q is the report's name for findings without a team", file, i+1, report.Unattributed)
		}
		if _, err := path.Match(r.Pattern, ""); err != nil {
			return nil, fmt.Errorf("--team-map %s: entry %d: pattern %q: %w", file, i+1, r.Pattern, err)
		}
	}
	return m, nil
}

// apply answers doc with every namespace a rule matches given that rule's team; doc itself
// is not changed, and without rules doc is answered as it is.
func (m TeamMap) apply(doc *inventory.Document) *inventory.Document {
	if len(m) == 0 {
		return doc
	}
	c := *doc
	c.Namespaces = make([]inventory.Namespace, len(doc.Namespaces))
	for i, ns := range doc.Namespaces {
		for _, r := range m {
			if ok, _ := path.Match(r.Pattern, ns.Name); ok {
				ns.Team = r.Team
				break
			}
		}
		c.Namespaces[i] = ns
	}
	return &c
}
