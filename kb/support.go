package kb

import (
	"regexp"
	"time"
)

// Support is an add-on's, or one of its release lines', support on a day, judged as the
// addons rule judges it (policies/rules/upgradescope/rules/addons/addons.rego): by the UTC
// date of the evaluation clock, not by the registry's status word alone. A registry entry
// says "supported" with an end-of-life date; from that date on the rule reports it as end of
// life, and so must anything that shows the registry.
type Support struct {
	State SupportState
	// Date is the end-of-life date the state is judged from ("" when there is none).
	Date string
}

// SupportState is the rule's judgement of one end-of-life entry.
type SupportState string

const (
	// SupportEnded: retired without a date, a line marked "ended", or an end-of-life date
	// on or before today (the rule's ended: eol <= today). The rule reports eol-addon.
	SupportEnded SupportState = "ended"
	// SupportEnding: the end-of-life date is after today and within the knowledge base's
	// approachingDays (or the add-on is retired with a date ahead). The rule reports
	// eol-approaching.
	SupportEnding SupportState = "ending"
	// SupportActive: a dated end of life further ahead, or none known; the rule reports
	// nothing about the date.
	SupportActive SupportState = "active"
)

// isDate is the rule's is_date: a YYYY-MM-DD string, compared as text.
var isDate = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// today is the rule's today (substring(input.now, 0, 10), now in UTC as the engine writes it)
// and horizon its horizon_day, approachingDays later.
func (k *KB) days(now time.Time) (today, horizon string) {
	now = now.UTC()
	return now.Format(time.DateOnly), now.AddDate(0, 0, k.approachingDays).Format(time.DateOnly)
}

// AddonSupport judges a's product-level support on now's UTC day, as product_findings does.
func (k *KB) AddonSupport(a *Addon, now time.Time) Support {
	today, horizon := k.days(now)
	eol := a.Support.EOL
	switch {
	case a.Support.Status == "retired" && !isDate.MatchString(eol):
		return Support{State: SupportEnded}
	case isDate.MatchString(eol) && eol <= today:
		return Support{State: SupportEnded, Date: eol}
	case isDate.MatchString(eol) && (a.Support.Status == "retired" || eol <= horizon):
		return Support{State: SupportEnding, Date: eol}
	}
	return Support{State: SupportActive, Date: dateOrNone(eol)}
}

// LineSupport judges a release line on now's UTC day, as line_eol does.
func (k *KB) LineSupport(l *AddonLine, now time.Time) Support {
	today, horizon := k.days(now)
	switch {
	case l.EOL == "ended":
		return Support{State: SupportEnded}
	case isDate.MatchString(l.EOL) && l.EOL <= today:
		return Support{State: SupportEnded, Date: l.EOL}
	case isDate.MatchString(l.EOL) && l.EOL <= horizon:
		return Support{State: SupportEnding, Date: l.EOL}
	}
	return Support{State: SupportActive, Date: dateOrNone(l.EOL)}
}

// ExtendedActive answers whether a's extended support is still ahead on now's UTC day, as
// extended_note does (extendedEol > today).
func (k *KB) ExtendedActive(a *Addon, now time.Time) bool {
	today, _ := k.days(now)
	return a.Support.ExtendedEOL > today
}

func dateOrNone(s string) string {
	if isDate.MatchString(s) {
		return s
	}
	return ""
}
