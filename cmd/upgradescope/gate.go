package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// defaultGateTimeout is gate's patience: the server may queue a gate behind others before it
// evaluates it (twice, against a cluster), so one request may take well beyond a read's
// timeout.
const defaultGateTimeout = 5 * time.Minute

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
	sarifBase       string
	timeout         time.Duration
	teamLabel       string
	bundles         bundleFlags
	exclude         excludeFlags
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
this binary's knowledge (or --bundle's): keep it at the server's version. The server answers
JSON and the report is rendered here, as scan renders it: SARIF and Code Quality locations
are relative to the repository root holding --files (or --sarif-base).

--cluster judges the manifests applied to that stored cluster, failing only on what they
introduce. The suppression file (--config, else .upgradescope.yaml beside the input or in
the working directory) travels in the request body, at most 32 KiB. A busy server (503) is
asked again after its Retry-After, up to three times.`,
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
	fl.StringVar(&f.inventoryPath, "inventory", "", "inventory JSON `FILE`, as upgradescope inventory writes it, instead of --files")
	fl.StringVarP(&f.output, "output", "o", output.FormatTable, "output format, rendered by the server: "+strings.Join(output.Formats(), ", "))
	fl.StringVar(&f.failOn, "fail-on", report.FailOnBlocker, "exit 2 on: blocker, warning or never")
	fl.BoolVar(&f.allowIncomplete, "allow-incomplete", false, "do not fail the gate when the verdict is unknown")
	fl.StringVar(&f.configPath, "config", "", "suppression file sent with the request (default: .upgradescope.yaml beside the input, else in the working directory)")
	fl.StringVar(&f.sarifBase, "sarif-base", "", "directory SARIF and Code Quality locations are relative to (default: the repository root holding --files, else the working directory)")
	fl.DurationVar(&f.timeout, "timeout", defaultGateTimeout, "longest each request may take, waiting for a turn on a busy server included (a busy server is asked at most three times)")
	fl.StringVar(&f.teamLabel, "team-label", "team", "with --files: Namespace label whose value names the team that owns it")
	f.bundles.register(cmd)
	f.exclude.register(cmd)
	registerQuiet(cmd, &f.quiet)
	_ = cmd.MarkFlagRequired("server")
	_ = cmd.MarkFlagRequired("target")
	completeValues(cmd, "output", output.Formats()...)
	completeValues(cmd, "fail-on", report.FailOnBlocker, report.FailOnWarning, report.FailOnNever)
	return cmd
}

// gateQuery is what the gate asks, validated.
func (f *gateFlags) gateQuery() (client.GateQuery, error) {
	if (f.filesPath == "") == (f.inventoryPath == "") {
		return client.GateQuery{}, errors.New("give one of --files PATH (manifests) or --inventory FILE")
	}
	minor, err := inventory.ParseTarget(f.target)
	if err != nil {
		return client.GateQuery{}, fmt.Errorf("--target: %w", err)
	}
	format, err := output.ParseFormat(f.output)
	if err != nil {
		return client.GateQuery{}, fmt.Errorf("--output: %w", err)
	}
	failOn, err := report.ParseFailOn(f.failOn)
	if err != nil {
		return client.GateQuery{}, fmt.Errorf("--fail-on: %w", err)
	}
	if f.timeout <= 0 {
		return client.GateQuery{}, fmt.Errorf("--timeout %s: want a positive duration", f.timeout)
	}
	f.output = format
	return client.GateQuery{Target: minor, FailOn: failOn, AllowIncomplete: f.allowIncomplete, Cluster: f.cluster}, nil
}

// runGate sends the request and turns the server's answer into output and an exit code.
func runGate(ctx context.Context, s streams, f *gateFlags) error {
	g, err := f.gateQuery()
	if err != nil {
		return err
	}
	c, err := fleetClient(s, f.server, f.caFile, f.token, "read-token", client.WithTimeout(f.timeout))
	if err != nil {
		return err
	}
	inv, dir, err := f.inventoryBody(ctx, s)
	if err != nil {
		return err
	}
	cfg, err := f.configText(dir)
	if err != nil {
		return err
	}
	rep, err := c.Gate(ctx, g, api.GateRequest{Inventory: inv, Config: cfg}, client.OnRetry(func(err error, wait time.Duration) {
		fmt.Fprintf(s.err, "upgradescope: %v; asking again in %s\n", err, wait)
	}))
	if err != nil {
		return err
	}
	opts := output.Options{FailOn: g.FailOn, SARIFBase: sarifBase(f.sarifBase, rep.FilesBase)}
	if err := output.Render(s.out, f.output, rep, opts); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if reason := rep.Gate(g.FailOn, f.allowIncomplete); reason != "" {
		// The reason names what the server's report says (targets, capabilities).
		return &exitError{code: exitGate, msg: "gate failed: " + output.Escape(reason)}
	}
	return nil
}

// inventoryBody is the inventory the gate judges, as JSON, and the directory a suppression
// file is looked for beside.
func (f *gateFlags) inventoryBody(ctx context.Context, s streams) ([]byte, string, error) {
	var doc *inventory.Document
	var dir string
	ex, err := f.exclude.forFiles(f.filesPath, f.configPath)
	if err != nil {
		return nil, "", err
	}
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
		if doc, err = collectFiles(s, rep, eng, f.filesPath, f.teamLabel, time.Now().UTC(), ex); err != nil {
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
	data, err := smallfile.Read(path, api.MaxGateConfig)
	if err != nil {
		return "", fmt.Errorf("--config: %w (a gate sends at most %d KiB)", err, api.MaxGateConfig>>10)
	}
	if _, err := config.Parse(path, data); err != nil {
		return "", err
	}
	return string(data), nil
}
