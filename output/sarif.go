package output

import (
	"encoding/json"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// SARIF 2.1.0: one rule per finding key; manifest findings carry file and line.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool sarifTool `json:"tool"`
	// OriginalURIBaseIDs says where %SRCROOT% is on the machine that scanned; code scanning
	// resolves it to the repository checkout instead.
	OriginalURIBaseIDs map[string]sarifArtifact `json:"originalUriBaseIds,omitempty"`
	Results            []sarifResult            `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
	// Extensions are the policy bundles that judged: SARIF's tool components that add rules.
	Extensions []sarifExtension `json:"extensions"`
}

type sarifExtension struct {
	Name       string         `json:"name"`
	Version    string         `json:"version"`
	Properties map[string]any `json:"properties"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	ShortDescription sarifText      `json:"shortDescription"`
	HelpURI          string         `json:"helpUri,omitempty"`
	Properties       map[string]any `json:"properties"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    int                `json:"ruleIndex"`
	Level        string             `json:"level"`
	Message      sarifText          `json:"message"`
	Locations    []sarifLocation    `json:"locations,omitempty"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	Properties   map[string]any     `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// srcRoot is the SARIF base id code-scanning tools map to the repository root.
const srcRoot = "%SRCROOT%"

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

// alreadyInCluster marks a finding a gate's cluster context already had: it never fails the
// gate.
const alreadyInCluster = "already in the cluster, not introduced by these manifests"

var sarifLevel = map[string]string{report.SeverityBlocker: "error", report.SeverityWarning: "warning", report.SeverityInfo: "note"}

// sarifRenderer writes a SARIF 2.1.0 log. Locations are relative to base (the repository
// root) with uriBaseId %SRCROOT% when the scanned files lie under it.
type sarifRenderer struct{ base string }

func (s sarifRenderer) Render(w io.Writer, r *report.Report) error {
	loc := s.locator(r.FilesBase)
	driver := sarifDriver{
		Name: "upgradescope", Version: r.ToolVersion,
		InformationURI: "https://github.com/upgradescope/upgradescope", Rules: []sarifRule{},
	}
	ruleIndex := map[string]int{}
	results := []sarifResult{}
	for _, t := range r.Targets {
		for _, f := range append(append([]report.Finding(nil), t.Findings...), t.Suppressed...) {
			idx, ok := ruleIndex[f.Key]
			if !ok {
				idx = len(driver.Rules)
				ruleIndex[f.Key] = idx
				driver.Rules = append(driver.Rules, ruleFor(f))
			}
			results = append(results, resultFor(f, idx, loc))
		}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: driver, Extensions: extensions(r)}, OriginalURIBaseIDs: loc.baseIDs(),
			Results: results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

func ruleFor(f report.Finding) sarifRule {
	rule := sarifRule{
		ID: f.Key, Name: f.Category, ShortDescription: sarifText{Text: f.Title},
		Properties: map[string]any{"category": f.Category},
	}
	if len(f.Citations) > 0 {
		rule.HelpURI = f.Citations[0]
	}
	return rule
}

func resultFor(f report.Finding, ruleIdx int, loc locator) sarifResult {
	msg := f.Title
	if f.Detail != "" {
		msg += " — " + f.Detail
	}
	if f.Remediation != "" {
		msg += " Fix: " + f.Remediation
	}
	msg += withChartFix(f)
	res := sarifResult{
		RuleID: f.Key, RuleIndex: ruleIdx, Level: sarifLevel[f.Severity], Message: sarifText{Text: msg},
		Properties: map[string]any{"target": f.Target, "severity": f.Severity},
	}
	if f.Source != "" {
		res.Properties["source"] = f.Source
	}
	// The chart version to move to is data, not an edit: SARIF's fixes would need the
	// artifact's changed bytes, which a chart bump in another repository does not have.
	if f.Fix != nil {
		res.Properties["fix"] = f.Fix
	}
	// What a gated cluster already had is context for the review, not a fault of the change.
	if !f.Introduced() {
		res.Level = "note"
		res.Message.Text = alreadyInCluster + ": " + msg
	}
	for _, o := range f.Objects {
		if o.File == "" {
			continue
		}
		res.Locations = append(res.Locations, sarifLocation{PhysicalLocation: sarifPhysical{
			ArtifactLocation: loc.artifact(o.File),
			Region:           sarifRegion{StartLine: max(o.Line, 1)},
		}})
	}
	if f.Suppression != nil {
		res.Suppressions = []sarifSuppression{{Kind: "external", Justification: f.Suppression.Reason}}
	}
	return res
}

// locator turns a file named relative to the scanned directory into a SARIF artifact.
type locator struct {
	filesBase string // the scanned directory as the report names it
	root      string // absolute repository root; "" when unknown
	under     bool   // filesBase lies under root
	rel       string // filesBase relative to root
}

func (s sarifRenderer) locator(filesBase string) locator {
	l := locator{filesBase: filesBase}
	if s.base == "" {
		return l
	}
	root, err1 := filepath.Abs(s.base)
	dir, err2 := filepath.Abs(filesBase)
	if err1 != nil || err2 != nil {
		return l
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return l
	}
	l.root, l.under, l.rel = root, true, filepath.ToSlash(rel)
	return l
}

func (l locator) artifact(file string) sarifArtifact {
	if l.under {
		return sarifArtifact{URI: path.Join(l.rel, filepath.ToSlash(file)), URIBaseID: srcRoot}
	}
	// Without a known root, a relative scan directory still names the file from where the
	// scan ran; an absolute one cannot be mapped, so it becomes a file URI.
	if l.filesBase == "" {
		return sarifArtifact{URI: filepath.ToSlash(file)}
	}
	if filepath.IsAbs(l.filesBase) {
		return sarifArtifact{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(l.filesBase, file))}).String()}
	}
	return sarifArtifact{URI: path.Join(filepath.ToSlash(l.filesBase), filepath.ToSlash(file))}
}

func (l locator) baseIDs() map[string]sarifArtifact {
	if !l.under {
		return nil
	}
	return map[string]sarifArtifact{srcRoot: {URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(l.root) + "/"}).String()}}
}

func extensions(r *report.Report) []sarifExtension {
	out := make([]sarifExtension, 0, len(r.Bundles))
	for _, b := range r.Bundles {
		out = append(out, sarifExtension{Name: b.Name, Version: b.Revision, Properties: map[string]any{"source": b.Source, "roots": b.Roots}})
	}
	return out
}
