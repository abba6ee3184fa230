// Package output renders reports. Renderers never decide: every number and verdict they
// print comes from the report. Each format lives in its own file behind Renderer; formats
// below is the one list of them.
package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// Renderer writes a report in one format.
type Renderer interface {
	Render(w io.Writer, r *report.Report) error
}

// Options carry what a renderer needs besides the report.
type Options struct {
	// FailOn decides which findings JUnit marks as failures (report.FailOn*).
	FailOn string
	// SARIFBase is the directory SARIF and GitLab Code Quality locations are made relative
	// to (the repository root); "" keeps them relative to the scanned directory's own base.
	SARIFBase string
}

// Formats a report can be rendered in.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatSARIF = "sarif"
	FormatJUnit = "junit"
	// FormatMarkdown is a CI step summary or a pull request comment.
	FormatMarkdown = "markdown"
	// FormatGitLab is a GitLab Code Quality report (artifacts:reports:codequality).
	FormatGitLab = "gitlab-codequality"
)

// format is one entry of the list: how to build its renderer and whether it can show an
// upgrade plan (hops), which SARIF and JUnit have no place for.
type format struct {
	name  string
	plan  bool
	build func(Options) Renderer
}

var formats = []format{
	{FormatTable, true, func(Options) Renderer { return tableRenderer{} }},
	{FormatJSON, true, func(Options) Renderer { return jsonRenderer{} }},
	{FormatSARIF, false, func(o Options) Renderer { return sarifRenderer{base: o.SARIFBase} }},
	{FormatJUnit, false, func(o Options) Renderer { return junitRenderer{failOn: o.FailOn} }},
	{FormatMarkdown, false, func(Options) Renderer { return markdownRenderer{} }},
	{FormatGitLab, false, func(o Options) Renderer { return gitlabRenderer{base: o.SARIFBase} }},
}

// Formats lists the format names, in the order help texts show them.
func Formats() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return names
}

// PlanFormats lists the formats that can render an upgrade plan.
func PlanFormats() []string {
	var names []string
	for _, f := range formats {
		if f.plan {
			names = append(names, f.name)
		}
	}
	return names
}

func lookup(name string) (format, error) {
	for _, f := range formats {
		if f.name == name {
			return f, nil
		}
	}
	return format{}, fmt.Errorf("unknown output format %q: want %s", name, orList(Formats()))
}

// ParseFormat validates a format name.
func ParseFormat(name string) (string, error) {
	f, err := lookup(name)
	return f.name, err
}

// CheckPlan says whether format can render an upgrade plan; the caller asks before it
// evaluates, so a refusal costs nothing.
func CheckPlan(name string) error {
	f, err := lookup(name)
	if err != nil {
		return err
	}
	if !f.plan {
		return fmt.Errorf("an upgrade plan renders as %s, not %s", orList(PlanFormats()), name)
	}
	return nil
}

// New returns the renderer of a format.
func New(name string, opts Options) (Renderer, error) {
	f, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return f.build(opts), nil
}

// Render writes r to w in format.
func Render(w io.Writer, name string, r *report.Report, opts Options) error {
	if len(r.Plan) > 0 {
		if err := CheckPlan(name); err != nil {
			return err
		}
	}
	rd, err := New(name, opts)
	if err != nil {
		return err
	}
	return rd.Render(w, r)
}

// orList spells names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// withChartFix is what formats with one text for a finding's remediation append to it: the
// chart advisor's fix as report.ChartFix.Summary words it, or nothing. The remediation
// already opens with the version to upgrade to; this adds what changes with it, the
// version for every hop, and why a repository could not be read.
func withChartFix(f report.Finding) string {
	if f.Fix == nil {
		return ""
	}
	return " Chart fix: " + f.Fix.Summary(f.Target) + "."
}
