package output

import (
	"encoding/json"
	"io"
	"path"
	"path/filepath"

	"github.com/upgradescope/upgradescope/engine"
)

// SARIF 2.1.0: one rule per finding key; manifest findings carry file and line.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
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
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

var sarifLevel = map[string]string{engine.SeverityBlocker: "error", engine.SeverityWarning: "warning", engine.SeverityInfo: "note"}

// SARIF writes a SARIF 2.1.0 log.
func SARIF(w io.Writer, r *engine.Report) error {
	driver := sarifDriver{
		Name: "upgradescope", Version: r.ToolVersion,
		InformationURI: "https://github.com/upgradescope/upgradescope", Rules: []sarifRule{},
	}
	ruleIndex := map[string]int{}
	results := []sarifResult{}
	for _, t := range r.Targets {
		for _, f := range append(append([]engine.Finding(nil), t.Findings...), t.Suppressed...) {
			idx, ok := ruleIndex[f.Key]
			if !ok {
				idx = len(driver.Rules)
				ruleIndex[f.Key] = idx
				driver.Rules = append(driver.Rules, ruleFor(f))
			}
			results = append(results, resultFor(f, idx, r.FilesBase))
		}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver, Extensions: extensions(r)}, Results: results}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

func ruleFor(f engine.Finding) sarifRule {
	rule := sarifRule{
		ID: f.Key, Name: f.Category, ShortDescription: sarifText{Text: f.Title},
		Properties: map[string]any{"category": f.Category},
	}
	if len(f.Citations) > 0 {
		rule.HelpURI = f.Citations[0]
	}
	return rule
}

func resultFor(f engine.Finding, ruleIdx int, base string) sarifResult {
	msg := f.Title
	if f.Detail != "" {
		msg += " — " + f.Detail
	}
	if f.Remediation != "" {
		msg += " Fix: " + f.Remediation
	}
	res := sarifResult{
		RuleID: f.Key, RuleIndex: ruleIdx, Level: sarifLevel[f.Severity], Message: sarifText{Text: msg},
		Properties: map[string]any{"target": f.Target, "severity": f.Severity},
	}
	for _, o := range f.Objects {
		if o.File == "" {
			continue
		}
		res.Locations = append(res.Locations, sarifLocation{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: artifactURI(base, o.File)},
			Region:           sarifRegion{StartLine: max(o.Line, 1)},
		}})
	}
	if f.Suppression != nil {
		res.Suppressions = []sarifSuppression{{Kind: "external", Justification: f.Suppression.Reason}}
	}
	return res
}

// artifactURI names a file relative to where the scan ran, as code-scanning tools expect.
func artifactURI(base, file string) string {
	if base == "" || filepath.IsAbs(base) {
		return file
	}
	return path.Join(filepath.ToSlash(base), file)
}

func extensions(r *engine.Report) []sarifExtension {
	out := make([]sarifExtension, 0, len(r.Bundles))
	for _, b := range r.Bundles {
		out = append(out, sarifExtension{Name: b.Name, Version: b.Revision, Properties: map[string]any{"source": b.Source, "roots": b.Roots}})
	}
	return out
}
