package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// formatOutputs is render's own format: the gating target's numbers as key=value lines.
const formatOutputs = "outputs"

// maxReportFile bounds a saved report read into memory, as an answer from a server is.
const maxReportFile = client.MaxAnswer

func newRenderCommand(s streams) *cobra.Command {
	var path, format, failOn, base string
	cmd := &cobra.Command{
		Use:   "render --report FILE --output FORMAT",
		Short: "Render a saved JSON report (scan, eval or gate --output json) in another format; judges nothing",
		Long: `render reads a report written with --output json and writes it in --output, exactly as the
command that judged would have: one judgement, several files, as CI wants them. It judges
nothing and always exits 0 once the report is written; the gate's exit code is the judging
command's.

--output outputs writes the gating target's (the last one's) numbers as key=value lines,
for $GITHUB_OUTPUT or a GitLab dotenv report: target, verdict, ready, score, blockers,
warnings, infos and suppressed.

Run it where the judging command ran: SARIF and Code Quality locations are found from the
report's scanned path as that command would (--sarif-base, else the repository root above it).`,
		Example: `  upgradescope scan --files ./rendered --target 1.37 -o json > report.json
  upgradescope render --report report.json -o sarif > upgradescope.sarif
  upgradescope render --report report.json -o markdown >> "$GITHUB_STEP_SUMMARY"
  upgradescope render --report report.json -o outputs >> "$GITHUB_OUTPUT"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRender(s, path, format, failOn, base)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&path, "report", "", "a report written with --output json (required)")
	fl.StringVarP(&format, "output", "o", output.FormatTable, "output format: "+strings.Join(renderFormats(), ", "))
	fl.StringVar(&failOn, "fail-on", report.FailOnBlocker, "the findings JUnit marks as failures: blocker, warning or never")
	fl.StringVar(&base, "sarif-base", "", "directory SARIF and Code Quality locations are relative to (default: the repository root holding the scanned files, else the working directory)")
	_ = cmd.MarkFlagRequired("report")
	completeValues(cmd, "output", renderFormats()...)
	completeValues(cmd, "fail-on", report.FailOnBlocker, report.FailOnWarning, report.FailOnNever)
	return cmd
}

func renderFormats() []string { return append(output.Formats(), formatOutputs) }

func runRender(s streams, path, format, failOn, base string) error {
	if !slices.Contains(renderFormats(), format) {
		return fmt.Errorf("--output: unknown output format %q: want one of %s", format, strings.Join(renderFormats(), ", "))
	}
	failOn, err := report.ParseFailOn(failOn)
	if err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	rep, err := readReport(path)
	if err != nil {
		return err
	}
	if format == formatOutputs {
		return writeOutputs(s, rep)
	}
	if err := output.Render(s.out, format, rep, output.Options{FailOn: failOn, SARIFBase: sarifBase(base, rep.FilesBase)}); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// readReport reads a JSON report: one of this schema version, with a target.
func readReport(path string) (*report.Report, error) {
	data, err := smallfile.Read(path, maxReportFile)
	if err != nil {
		return nil, fmt.Errorf("--report: %w", err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("--report %s: not a JSON report (write one with --output json): %w", path, err)
	}
	if rep.SchemaVersion != report.SchemaVersion || len(rep.Targets) == 0 {
		return nil, fmt.Errorf("--report %s: not a JSON report of schema version %d with a target (write one with --output json)", path, report.SchemaVersion)
	}
	return &rep, nil
}

// writeOutputs writes the last target's numbers, the one that gates (a plan's last hop).
// Every value is a minor, a verdict, a bool or a number: safe on a key=value line.
func writeOutputs(s streams, rep *report.Report) error {
	t := rep.Targets[len(rep.Targets)-1]
	for _, kv := range [][2]string{
		{"target", t.Target}, {"verdict", t.Verdict}, {"ready", strconv.FormatBool(t.Verdict == report.VerdictReady)},
		{"score", strconv.Itoa(t.Score)}, {"blockers", strconv.Itoa(t.Blockers)}, {"warnings", strconv.Itoa(t.Warnings)},
		{"infos", strconv.Itoa(t.Infos)}, {"suppressed", strconv.Itoa(t.SuppressedCount)},
	} {
		if strings.ContainsAny(kv[1], "\r\n=") {
			return fmt.Errorf("the report's %s %q is not a single value", kv[0], kv[1])
		}
		if _, err := fmt.Fprintf(s.out, "%s=%s\n", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}
