package report

import (
	"fmt"
	"strings"
)

// Summary is the one line every output shows for a chart fix at a finding's target:
// "upgrade chart shop 1.4.0 → 1.6.0 (appVersion 2.3.1 → 2.5.0; APIs: +policy/v1
// PodDisruptionBudget, −policy/v1beta1 PodDisruptionBudget); every hop: 1.6.0",
// "no version of shop judged works at 1.33 (…)" or "repository not read: …".
func (c *ChartFix) Summary(target string) string {
	switch c.Status {
	case ChartFixUpgrade:
		s := fmt.Sprintf("upgrade chart %s %s → %s", c.Chart, c.From, c.To)
		if changes := c.changes(); changes != "" {
			s += " (" + changes + ")"
		}
		if c.Reason != "" {
			s += "; " + c.Reason
		}
		if c.EveryHop != "" {
			s += "; every hop: " + c.EveryHop
		}
		return s
	case ChartFixNone:
		s := fmt.Sprintf("no version of %s judged works at %s", c.Chart, target)
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if c.EveryHop != "" {
			s += "; every hop: " + c.EveryHop
		}
		return s
	default:
		return "repository not read: " + c.Reason
	}
}

// changes is what differs between From and To: "appVersion 2.3.1 → 2.5.0; APIs: +a, −b".
func (c *ChartFix) changes() string {
	var parts []string
	if c.FromAppVersion != "" || c.ToAppVersion != "" {
		parts = append(parts, fmt.Sprintf("appVersion %s → %s", orUnknown(c.FromAppVersion), orUnknown(c.ToAppVersion)))
	}
	var apis []string
	for _, a := range c.APIsAdded {
		apis = append(apis, "+"+a)
	}
	for _, a := range c.APIsRemoved {
		apis = append(apis, "−"+a)
	}
	if len(apis) > 0 {
		parts = append(parts, "APIs: "+strings.Join(apis, ", "))
	}
	return strings.Join(parts, "; ")
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
