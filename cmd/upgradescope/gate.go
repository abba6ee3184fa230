package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
	"github.com/upgradescope/upgradescope/server"
)

// maxGateConfig bounds the .upgradescope.yaml a gate sends: it travels URL-encoded in the
// query, which the server bounds with its request header.
const maxGateConfig = 32 << 10

// gateFlags are gate's flags: the server, what to send and how the answer is wanted.
type gateFlags struct {
	server, caFile  string
	token           tokenFlag
	cluster         string
	target          string
	filesPath       string
	inventoryPath   string
	output          string
	failOn          string
	allowIncomplete bool
	configPath      string
	teamLabel       string
	bundles         bundleFlags
	quiet           bool
}

func newGateCommand(s streams) *cobra.Command {
	var f gateFlags
	cmd := &cobra.Command{
		Use:   "gate --server URL --target 1.37 --files PATH | --inventory FILE",
		Short: "Have a fleet server judge rendered manifests (or an inventory) and gate on its answer",
		Long: `gate sends rendered manifests, or an inventory document, to a fleet server's
POST /api/v1/gate and prints the report the server renders in --output. It exits as scan
does: 0 when the gate passes, 2 when it fails (a finding at --fail-on, or the verdict
unknown without --allow-incomplete), 1 on an error, the server's message printed.

--files is read here, with the collector scan --files uses, and sent as the inventory it
makes: every object keeps its file and line, and the report is the one scan --files would
print at the server's clock and with the server's bundles. Which kinds are worth reading is
this binary's knowledge (or --bundle's): keep it at the server's version. Run it from the
repository root with a relative --files path, as CI does: SARIF and Code Quality locations
are then repository paths.

--cluster judges the manifests against that stored cluster (where the server offers it).
The suppression file (--config, else .upgradescope.yaml beside the input or in the working
directory) is sent with the request, at most 32 KiB.`,
		Example: `  upgradescope gate --server https://fleet.example.com --read-token-file read.token --files ./rendered --target 1.37
  upgradescope gate --server https://fleet.example.com --cluster prod-eu-1 --files ./rendered --target 1.37 -o sarif > gate.sarif
  upgradescope gate --server http://127.0.0.1:8080 --inventory inventory.json --target 1.37 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimitFlag(runGate(cmd.Context(), s, &f))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", "", "the fleet server's http(s) URL (required)")
	fl.StringVar(&f.caFile, "server-ca-file", "", "PEM bundle trusted for an https --server, besides the system roots")
	f.token.register(cmd, "read-token", "UPGRADESCOPE_READ_TOKEN", "a token that reads the fleet")
	fl.StringVar(&f.cluster, "cluster", "", "judge against this stored cluster (id or name) instead of the manifests alone")
	fl.StringVar(&f.target, "target", "", "the target Kubernetes minor, e.g. 1.37 (required)")
	fl.StringVar(&f.filesPath, "files", "", "rendered manifests: a directory (walked) or one file")
	fl.StringVar(&f.inventoryPath, "inventory", "", "an inventory JSON written by `upgradescope inventory`, instead of --files")
	fl.StringVarP(&f.output, "output", "o", output.FormatTable, "output format, rendered by the server: "+strings.Join(output.Formats(), ", "))
	fl.StringVar(&f.failOn, "fail-on", report.FailOnBlocker, "exit 2 on: blocker, warning or never")
	fl.BoolVar(&f.allowIncomplete, "allow-incomplete", false, "do not fail the gate when the verdict is unknown")
	fl.StringVar(&f.configPath, "config", "", "suppression file sent with the request (default: .upgradescope.yaml beside the input, else in the working directory)")
	fl.StringVar(&f.teamLabel, "team-label", "team", "with --files: Namespace label whose value names the team that owns it")
	f.bundles.register(cmd)
	registerQuiet(cmd, &f.quiet)
	_ = cmd.MarkFlagRequired("server")
	_ = cmd.MarkFlagRequired("target")
	completeValues(cmd, "output", output.Formats()...)
	completeValues(cmd, "fail-on", report.FailOnBlocker, report.FailOnWarning, report.FailOnNever)
	return cmd
}

// gateQuery is the validated query of the request.
func (f *gateFlags) gateQuery() (url.Values, error) {
	if (f.filesPath == "") == (f.inventoryPath == "") {
		return nil, errors.New("give one of --files PATH (manifests) or --inventory FILE")
	}
	minor, err := inventory.ParseTarget(f.target)
	if err != nil {
		return nil, fmt.Errorf("--target: %w", err)
	}
	format, err := output.ParseFormat(f.output)
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	failOn, err := report.ParseFailOn(f.failOn)
	if err != nil {
		return nil, fmt.Errorf("--fail-on: %w", err)
	}
	q := url.Values{"target": {minor}, "format": {format}, "fail-on": {failOn},
		"allow-incomplete": {strconv.FormatBool(f.allowIncomplete)}}
	if f.cluster != "" {
		q.Set("cluster", f.cluster)
	}
	return q, nil
}

// runGate sends the request and turns the server's answer into output and an exit code.
func runGate(ctx context.Context, s streams, f *gateFlags) error {
	q, err := f.gateQuery()
	if err != nil {
		return err
	}
	tok, err := f.token.value("read-token")
	if err != nil {
		return err
	}
	c, err := newAPIClient(f.server, f.caFile, tok, "read-token")
	if err != nil {
		return err
	}
	if c.warning != "" {
		fmt.Fprintln(s.err, "upgradescope: warning:", c.warning)
	}
	body, dir, err := f.inventoryBody(ctx, s)
	if err != nil {
		return err
	}
	cfg, err := f.configText(dir)
	if err != nil {
		return err
	}
	if cfg != "" {
		q.Set("config", cfg)
	}
	verdict, answer, err := c.gate(ctx, q, body)
	if answer != nil {
		if _, werr := s.out.Write(answer); werr != nil {
			return fmt.Errorf("write report: %w", werr)
		}
	}
	if err != nil {
		return err
	}
	if verdict != "" {
		return &exitError{code: exitGate, msg: "gate failed: " + gateReason(verdict, q.Get("fail-on"))}
	}
	return nil
}

func gateReason(verdict, failOn string) string {
	if verdict == report.VerdictUnknown {
		return "verdict unknown (a required capability was not assessed; see the report)"
	}
	return fmt.Sprintf("verdict %s, a finding at or above --fail-on %s", verdict, failOn)
}

// inventoryBody is the inventory the gate judges, as JSON, and the directory a suppression
// file is looked for beside.
func (f *gateFlags) inventoryBody(ctx context.Context, s streams) ([]byte, string, error) {
	var doc *inventory.Document
	var dir string
	if f.inventoryPath != "" {
		d, err := inventory.ReadFile(f.inventoryPath)
		if err != nil {
			return nil, "", err
		}
		doc, dir = d, filepath.Dir(f.inventoryPath)
	} else {
		tuneGCForOneShot()
		rep := newProgress(s, f.quiet)
		defer rep.Close()
		opts, err := f.bundles.engineOptions(ctx)
		if err != nil {
			return nil, "", err
		}
		eng, err := loadEngine(ctx, rep, opts)
		if err != nil {
			return nil, "", err
		}
		if doc, err = collectFiles(s, rep, eng, f.filesPath, f.teamLabel, time.Now().UTC()); err != nil {
			return nil, "", err
		}
		dir = configDir(f.filesPath)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, "", fmt.Errorf("encode the inventory: %w", err)
	}
	return data, dir, nil
}

// configText is the suppression file to send, checked here so its errors name the file and
// line: --config, else .upgradescope.yaml in dir, else in the working directory; "" for none.
func (f *gateFlags) configText(dir string) (string, error) {
	path := f.configPath
	for _, d := range []string{dir, "."} {
		if path != "" {
			break
		}
		path, _ = config.Discover(d)
	}
	if path == "" {
		return "", nil
	}
	data, err := smallfile.Read(path, maxGateConfig)
	if err != nil {
		return "", fmt.Errorf("--config: %w (a gate sends at most %d KiB)", err, maxGateConfig>>10)
	}
	if _, err := config.Parse(path, data); err != nil {
		return "", err
	}
	return string(data), nil
}

// gate posts the inventory to /api/v1/gate. It answers the report to print; the verdict when
// the gate failed (422 with a report), "" when it passed (200); and an *apiError for any other
// answer, the server's JSON error included.
func (c *apiClient) gate(ctx context.Context, q url.Values, body []byte) (string, []byte, error) {
	req, err := c.request(ctx, http.MethodPost, bytes.NewReader(body), q, "api", "v1", "gate")
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Content-Type", server.InventoryContentType)
	resp, err := c.http.Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("POST %s: %w", c.endpoint("api", "v1", "gate"), err)
	}
	defer resp.Body.Close()
	verdict := resp.Header.Get("X-Upgradescope-Verdict")
	failed := resp.StatusCode == http.StatusUnprocessableEntity && verdict != ""
	// Errors name the endpoint, not the query: it may carry a whole suppression file.
	bare := req.Clone(ctx)
	bare.URL.RawQuery = ""
	if resp.StatusCode != http.StatusOK && !failed {
		return "", nil, c.refusal(bare, resp)
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIAnswer+1))
	if err != nil {
		return "", nil, fmt.Errorf("POST %s: read the answer: %w", bare.URL.Redacted(), err)
	}
	if len(answer) > maxAPIAnswer {
		return "", nil, fmt.Errorf("POST %s: the answer is larger than %d MiB", bare.URL.Redacted(), maxAPIAnswer>>20)
	}
	if failed && isErrorAnswer(answer) {
		// A refusal that happens to carry a verdict is still a refusal, not a report.
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		return "", nil, c.refusal(bare, resp)
	}
	if !failed {
		verdict = ""
	}
	return verdict, answer, nil
}

// isErrorAnswer tells the server's {"error": …} answer from a report.
func isErrorAnswer(data []byte) bool {
	var answer map[string]json.RawMessage
	if json.Unmarshal(data, &answer) != nil {
		return false
	}
	_, ok := answer["error"]
	return ok && len(answer) == 1
}
