package output

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// GitLab Code Quality report: a JSON array of issues, each with description, check_name,
// fingerprint, severity (info, minor, major, critical or blocker) and location.path with
// location.lines.begin, the path relative to the repository root without a leading "./".
// See https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format (a subset
// of the Code Climate issue spec, https://github.com/codeclimate/platform/blob/master/spec/analyzers/SPEC.md).
type gitlabIssue struct {
	Description string         `json:"description"`
	CheckName   string         `json:"check_name"`
	Fingerprint string         `json:"fingerprint"`
	Severity    string         `json:"severity"`
	Location    gitlabLocation `json:"location"`
	// target is the minor judged: part of the fingerprint, not of GitLab's format.
	target string
}

type gitlabLocation struct {
	Path  string      `json:"path"`
	Lines gitlabLines `json:"lines"`
}

type gitlabLines struct {
	Begin int `json:"begin"`
}

// gitlabSeverity maps a finding's severity onto GitLab's scale. A blocker is "critical", not
// "blocker": it stops the next cluster upgrade, not the code under review from working today,
// and whether it stops the merge is --fail-on's decision, which JUnit and the exit code
// carry. A warning is "major" (it will break later: a deprecated API, an add-on nearing its
// end of life), an info "info".
var gitlabSeverity = map[string]string{
	report.SeverityBlocker: "critical", report.SeverityWarning: "major", report.SeverityInfo: "info",
}

// gitlabUnanchored is where an issue with no file of its own is placed when the report names
// no scanned path (a live cluster): the file its suppression would be written in.
const gitlabUnanchored = ".upgradescope.yaml"

// gitlabRenderer writes a GitLab Code Quality report: one issue per object a finding names
// in a file (at its line), one issue at the scanned path for a finding without such an
// object, and one critical issue per required capability that was not assessed, so an
// unknown verdict is not an empty report. Suppressed findings are left out: GitLab has no
// place for a waiver; so are those a gated cluster already had: the merge request did not
// bring them. Paths are relative to base (the repository root) when the scanned
// files lie under it, as SARIF's are.
type gitlabRenderer struct{ base string }

func (g gitlabRenderer) Render(w io.Writer, r *report.Report) error {
	loc := sarifRenderer{base: g.base}.locator(r.FilesBase)
	anchor := gitlabUnanchored
	if r.FilesBase != "" {
		anchor = loc.repoPath("")
	}
	issues := []gitlabIssue{}
	for _, t := range r.Targets {
		for _, f := range t.Findings {
			if f.Introduced() {
				issues = append(issues, gitlabIssues(f, loc, anchor)...)
			}
		}
		for _, gap := range t.NotAssessed {
			if !gap.Required {
				continue
			}
			issues = append(issues, gitlabIssue{
				Description: gap.Capability + " not assessed at " + t.Target + " (the verdict is unknown): " + gap.Reason,
				CheckName:   "not-assessed/" + gap.Capability,
				Severity:    "critical",
				Location:    gitlabLocation{Path: anchor, Lines: gitlabLines{Begin: 1}},
				target:      t.Target,
			})
		}
	}
	seen := map[string]int{}
	for i := range issues {
		issues[i].Fingerprint = gitlabFingerprint(issues[i], seen)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(issues)
}

func gitlabIssues(f report.Finding, loc locator, anchor string) []gitlabIssue {
	desc := f.Title
	if f.Detail != "" {
		desc += " — " + f.Detail
	}
	if f.Remediation != "" {
		desc += " Fix: " + f.Remediation
	}
	desc += withChartFix(f)
	desc += " (target " + f.Target + ")"
	issue := gitlabIssue{Description: desc, CheckName: f.Key, Severity: gitlabSeverity[f.Severity], target: f.Target}
	var out []gitlabIssue
	for _, o := range f.Objects {
		if o.File == "" {
			continue
		}
		i := issue
		i.Location = gitlabLocation{Path: loc.repoPath(o.File), Lines: gitlabLines{Begin: max(o.Line, 1)}}
		out = append(out, i)
	}
	if len(out) == 0 {
		issue.Location = gitlabLocation{Path: anchor, Lines: gitlabLines{Begin: 1}}
		out = append(out, issue)
	}
	return out
}

// gitlabFingerprint is stable across runs of the same findings: the sha256 of the check
// (the finding key), the target, the path and the line; the target is in it because a
// report judging two minors names the same key at the same line once for each. GitLab tells new issues from fixed ones by
// fingerprint, so two issues of one report must not share one: a repeat (two objects of one
// finding on one line) gets its ordinal added.
func gitlabFingerprint(i gitlabIssue, seen map[string]int) string {
	key := strings.Join([]string{i.CheckName, i.target, i.Location.Path, strconv.Itoa(i.Location.Lines.Begin)}, "\x00")
	n := seen[key]
	seen[key]++
	if n > 0 {
		key += "\x00" + strconv.Itoa(n)
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// repoPath names file (relative to the scanned directory; "" for the directory itself) as
// GitLab wants it: relative to the repository root when the scan lies under it, else as the
// scan named it. An absolute path outside the root stays absolute: GitLab will not place it
// on a line, but it is not made up.
func (l locator) repoPath(file string) string {
	file = filepath.ToSlash(file)
	switch {
	case l.under:
		return path.Clean(path.Join(l.rel, file))
	case l.filesBase == "":
		return path.Clean(file)
	default:
		return path.Clean(path.Join(filepath.ToSlash(l.filesBase), file))
	}
}
