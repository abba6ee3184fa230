package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// version and commit are stamped by make build: -ldflags "-X main.version=v0.1.0 -X
// main.commit=…". Without them (go run), version says dev and commit falls back to what go
// build recorded (see buildCommit).
var (
	version = "dev"
	commit  = ""
)

type streams struct {
	in       io.Reader
	out, err io.Writer
}

// exitError ends the process with a code other than 1; its message, if any, goes to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Exit codes: 0 ready or below the threshold, 1 an error, 2 the gate failed.
const (
	exitOK   = 0
	exitErr  = 1
	exitGate = 2
)

func run(args []string, s streams) int {
	cmd := newRootCommand(s)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(s.err, "upgradescope:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(s.err, "upgradescope:", err)
	return exitErr
}

func newRootCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgradescope",
		Short: "Tell what breaks when a Kubernetes cluster moves to the next minor",
		Long: `upgradescope judges a Kubernetes cluster or a set of rendered manifests against a target
minor: removed APIs still written, APIs the target does not serve yet, and more, as findings,
a verdict (ready, blocked, unknown) and a score.

Exit codes: 0 ready or below --fail-on, 1 error, 2 gate failed or verdict unknown.
fix: 0 nothing to change, 1 error, 2 files would change, 3 something needs a person.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(s.in)
	cmd.SetOut(s.out)
	cmd.SetErr(s.err)
	cmd.AddCommand(
		newScanCommand(s),
		newFixCommand(s),
		newRehearseCommand(s),
		newInventoryCommand(s),
		newEvalCommand(s),
		newAuditPolicyCommand(s),
		newGateCommand(s),
		newPushCommand(s),
		newRenderCommand(s),
		newPolicyCommand(s),
		newVersionCommand(s),
		newAgentCommand(s),
		newBundleCommand(s),
		newTokensCommand(s),
		newClustersCommand(s),
		newServeCommand(s),
		newMCPCommand(s),
	)
	plainBools(cmd)
	return cmd
}
