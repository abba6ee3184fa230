package kb

import (
	"fmt"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// calendar is one managed provider's support dates by minor (kb.providers), as the
// lifecycle rule reads them.
type calendar struct {
	Versions map[string]struct {
		StandardEnd string `json:"standardEnd"`
		ExtendedEnd string `json:"extendedEnd"`
	} `json:"versions"`
}

// OldestSupported is the oldest minor a managed provider of the knowledge base (EKS, GKE,
// AKS) still supports on now's UTC day, extended support included: the oldest minor a
// cluster anyone is still served at may run. A minor's support has ended as the lifecycle
// rule's phase "ended" says (policies/rules/upgradescope/rules/lifecycle): its extended end,
// else its standard end, on or before today. ok is false when the knowledge base has no
// calendar, or every minor in it has ended.
func (k *KB) OldestSupported(now time.Time) (minor string, ok bool) {
	today, _ := k.days(now)
	var oldest inventory.Version
	for _, c := range k.providers {
		for m, dates := range c.Versions {
			end := dates.ExtendedEnd
			if end == "" {
				end = dates.StandardEnd
			}
			v, err := inventory.ParseVersion(m)
			if err != nil || !isDate.MatchString(end) || end <= today {
				continue
			}
			if !ok || oldest.LaterMinor(v) {
				oldest, ok = v, true
			}
		}
	}
	if !ok {
		return "", false
	}
	return oldest.MinorString(), true
}

// readProviders reads the support calendars. A knowledge base without them (one built
// before they existed) has none: OldestSupported says so.
func (k *KB) readProviders(v any) error {
	if v == nil {
		return nil
	}
	if err := remarshal(v, &k.providers); err != nil {
		return fmt.Errorf("/upgradescope/kb/providers is not a set of support calendars: %w", err)
	}
	return nil
}
