package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/internal/token"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// pushFlags are push's flags, spelt as the agent's.
type pushFlags struct {
	inventoryPath                                                      string
	serverURL, serverToken, serverTokenFile, serverCAFile, clusterName string
	output                                                             string
	timeout                                                            time.Duration
}

// pushBusyTries is how many times push asks a busy server (429 or 503 with Retry-After).
const pushBusyTries = 3

func newPushCommand(s streams) *cobra.Command {
	var f pushFlags
	cmd := &cobra.Command{
		Use:   "push --inventory FILE --server URL --ingest-token-file FILE --cluster-name NAME",
		Short: "Push an exported inventory to a fleet server, as the agent pushes one",
		Long: `push sends an inventory written by ` + "`upgradescope inventory`" + ` (a cluster's, or manifests') to a
fleet server's POST /api/v1/snapshots in the envelope the agent sends, with the agent's client:
for CI jobs and air-gapped clusters that export an inventory instead of running the agent. The
inventory is checked against the schema first; an error names the file and the JSON pointer.
It prints what the server answered: the snapshot, whether it was a duplicate of the cluster's
latest, and each target it was evaluated at with its verdict. A duplicate's answer has no
verdicts: push names GET /api/v1/clusters/{id}, where the stored ones are read. A refusal is
printed with the server's message.

The name is bound to the UID of its first push (the inventory's clusterId, "files" for
manifests): push a cluster's inventory under the name its agent uses, never another's.

Exit codes: 0 the server took it (new or duplicate), whatever the verdict: push delivers,
it does not gate (` + "`upgradescope eval --inventory`" + ` and ` + "`upgradescope gate`" + ` do); 1 an error or a refusal.`,
		Example: `  upgradescope inventory --context prod-eu-1 > prod-eu-1.json
  upgradescope push --inventory prod-eu-1.json --server https://fleet.example.com --ingest-token-file prod-eu-1.token --cluster-name prod-eu-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPush(cmd.Context(), s, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.inventoryPath, "inventory", "", "inventory JSON `FILE`, as upgradescope inventory writes it (required)")
	fl.StringVar(&f.serverURL, "server", "", "fleet server's http(s) `URL` (required)")
	fl.StringVar(&f.serverToken, "ingest-token", "", "ingest `TOKEN` (default $UPGRADESCOPE_SERVER_TOKEN); prefer --ingest-token-file")
	fl.StringVar(&f.serverTokenFile, "ingest-token-file", "", "`FILE` holding the ingest token")
	fl.StringVar(&f.serverCAFile, "server-ca-file", "", "PEM bundle `FILE` trusted for an https --server, besides the system roots")
	fl.StringVar(&f.clusterName, "cluster-name", "", "`NAME` the snapshot is stored under, an RFC 1123 subdomain (required)")
	fl.StringVarP(&f.output, "output", "o", "text", "`FORMAT`: text, or json (the server's answer)")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "longest the push may take, waiting on a busy server included")
	_ = cmd.MarkFlagRequired("inventory")
	_ = cmd.MarkFlagRequired("server")
	_ = cmd.MarkFlagRequired("cluster-name")
	completeValues(cmd, "output", "text", "json")
	deprecatedAlias(cmd, "server-url", "server")
	deprecatedAlias(cmd, "server-token", "ingest-token")
	deprecatedAlias(cmd, "server-token-file", "ingest-token-file")
	return cmd
}

// runPush checks every flag and the inventory before anything is sent.
func runPush(ctx context.Context, s streams, f *pushFlags) error {
	if f.output != "text" && f.output != "json" {
		return fmt.Errorf("--output %q: want text or json", f.output)
	}
	if err := push.CheckClusterName(f.clusterName); err != nil {
		return fmt.Errorf("--cluster-name: %w", err)
	}
	doc, err := inventory.ReadFile(f.inventoryPath)
	if err != nil {
		return err
	}
	tokens := token.Source{File: f.serverTokenFile, Literal: f.serverToken, Env: "UPGRADESCOPE_SERVER_TOKEN"}
	if _, err := tokens.Token(); err != nil {
		return fmt.Errorf("--server needs a token without spaces: --ingest-token-file, --ingest-token or $UPGRADESCOPE_SERVER_TOKEN (%w)", err)
	}
	// The envelope's agentVersion, kbVersion and bundles name the binary that collected the
	// inventory, which the file does not name: push leaves them empty rather than name
	// itself, so the server's fix for missing probes does not blame this binary.
	c, err := push.New(push.Options{URL: f.serverURL, Token: tokens.Token, CAFile: f.serverCAFile,
		ClusterName: f.clusterName})
	if err != nil {
		return fmt.Errorf("--server/--server-ca-file: %w", err)
	}
	if c.Warning != "" {
		fmt.Fprintln(s.err, "warning:", c.Warning)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	answer, err := sendPatiently(ctx, s, c, doc)
	if err != nil {
		return err
	}
	return printPushAnswer(s, f, answer)
}

// sendPatiently sends once, and again after a busy server's Retry-After, pushBusyTries
// times at most.
func sendPatiently(ctx context.Context, s streams, c *push.Client, doc *inventory.Document) (push.Answer, error) {
	for try := 1; ; try++ {
		answer, err := c.Send(ctx, doc)
		wait, busy := push.BusyFor(err)
		if !busy || try == pushBusyTries {
			if ctx.Err() != nil && err != nil {
				return answer, fmt.Errorf("%w (past --timeout)", err)
			}
			return answer, err
		}
		fmt.Fprintf(s.err, "the server is busy: asking again in %s\n", wait)
		select {
		case <-ctx.Done():
			return push.Answer{}, fmt.Errorf("%w; gave up waiting (past --timeout)", err)
		case <-time.After(wait):
		}
	}
}

// printPushAnswer prints the server's answer: JSON as the server sent it, or one line.
func printPushAnswer(s streams, f *pushFlags, a push.Answer) error {
	if f.output == "json" {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(a)
	}
	if a.Duplicate {
		// A duplicate's answer carries no verdicts (the server may still have filled in a
		// target added since): say where the stored ones are read.
		fmt.Fprintf(s.out, "cluster %s: snapshot %d unchanged (a duplicate of its latest; nothing new stored); its stored verdicts: GET %s/api/v1/clusters/%d\n",
			f.clusterName, a.SnapshotID, strings.TrimRight(f.serverURL, "/"), a.ClusterID)
		return nil
	}
	fmt.Fprintf(s.out, "cluster %s: snapshot %d stored%s\n", f.clusterName, a.SnapshotID, judged(a))
	return nil
}

// judged says what the server judged a new snapshot: each target's verdict, or, from a
// server that answers no verdicts, the targets alone.
func judged(a push.Answer) string {
	if len(a.Verdicts) == 0 {
		if len(a.Evaluated) == 0 {
			return ", evaluated at no target"
		}
		return ", evaluated at " + strings.Join(a.Evaluated, ", ")
	}
	parts := make([]string, 0, len(a.Verdicts))
	for _, v := range a.Verdicts {
		parts = append(parts, v.Target+" "+v.Verdict+" ("+verdictDetail(v)+")")
	}
	return "; " + strings.Join(parts, ", ")
}

// verdictDetail backs a verdict: a blocked target's blockers and score, a ready one's
// score; an unknown one has no score to give, since it counts only what was assessed.
func verdictDetail(v push.Verdict) string {
	switch v.Verdict {
	case report.VerdictBlocked:
		return fmt.Sprintf("%s, score %d", report.Count(v.Blockers, "blocker"), v.Score)
	case report.VerdictReady:
		return fmt.Sprintf("score %d", v.Score)
	}
	return "score n/a: a required check was not assessed"
}
