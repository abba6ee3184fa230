package render

import (
	"errors"
	"regexp"
	"strings"
)

// Where a Helm template error happened: "web/templates/cm.yaml:6:12" in "template:
// web/templates/cm.yaml:6:12: executing …", "execution error at (web/templates/cm.yaml:6:12):
// …" (fail, required) or "parse error at (web/templates/cm.yaml:3): …".
var (
	errorPlace   = regexp.MustCompile(`[A-Za-z0-9_./-]+\.[A-Za-z0-9]+:[0-9]+(?::[0-9]+)?`)
	errorCalling = regexp.MustCompile(`error calling ([A-Za-z0-9_]+)`)
)

// withhold is err with Helm's message left out: only where the template failed and how
// (the function whose call failed, fail or required, a parse error) are kept. The message
// may quote a value in any shape: tpl quotes the text it could not parse, a chart's fail
// prints what it is given, upper-cased, base64-encoded or cut. Scrubbing known values out
// of it misses every shape but the literal one. The error becomes a version's Error in
// the inventory, which leaves the scan, and values never do; helm template on the same
// chart and values shows the whole message to whoever holds them.
func withhold(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	how := "failed"
	switch {
	case strings.Contains(text, pastBound) && !errorCalling.MatchString(text):
		how = "failed: its functions returned a result " + pastBound + " (docs/charts.md)"
	case strings.Contains(text, pastBound) && errorCalling.MatchString(text):
		fn := errorCalling.FindStringSubmatch(text)[1]
		how = "failed: " + fn + " asked for a result " + pastBound + " (docs/charts.md)"
	case errorCalling.MatchString(text):
		how = "failed calling " + errorCalling.FindStringSubmatch(text)[1]
	case strings.Contains(text, "execution error at ("):
		how = "failed (fail or required)"
	case strings.Contains(text, "parse error"):
		how = "does not parse"
	}
	where := "a template"
	if place := errorPlace.FindString(text); place != "" {
		where = "template " + place
	}
	return errors.New(where + " " + how + " (Helm's message is not kept: it may quote values)")
}
