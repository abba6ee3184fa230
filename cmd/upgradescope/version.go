package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/report"
)

type versionInfo struct {
	Version string              `json:"version"`
	Commit  string              `json:"commit"`
	Go      string              `json:"go"`
	OPA     string              `json:"opa"`
	KB      report.KBMeta       `json:"kb"`
	Bundles []report.BundleInfo `json:"bundles"`
}

func newVersionCommand(s streams) *cobra.Command {
	var format string
	var bf bundleFlags
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the tool, Go and OPA versions, the bundle revision and the KB horizon",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// With --bundle, the set a scan would evaluate with: a quick check of a new kb.
			opts, err := bf.engineOptions(cmd.Context())
			if err != nil {
				return err
			}
			eng, err := engine.New(cmd.Context(), append(opts, engine.WithToolVersion(version))...)
			if err != nil {
				return withLimitFlag(err)
			}
			v := versionInfo{Version: version, Commit: buildCommit(), Go: runtime.Version(), OPA: moduleVersion("github.com/open-policy-agent/opa"), KB: eng.KB().Meta(), Bundles: eng.Bundles()}
			if format == "json" {
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			fmt.Fprintf(s.out, "upgradescope %s\ncommit:     %s\ngo:         %s\nopa:        %s\nkb:         %s (horizon: Kubernetes %s)\n",
				v.Version, v.Commit, v.Go, v.OPA, v.KB.GeneratedFrom, v.KB.Horizon)
			for _, b := range v.Bundles {
				fmt.Fprintf(s.out, "bundle:     %s %s (%s)\n", b.Name, b.Revision, b.Source)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "text or json")
	completeValues(cmd, "output", "text", "json")
	bf.register(cmd)
	return cmd
}

func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}

// buildCommit is the commit make build stamped, else the one go build recorded from the
// checkout (go run records none), else unknown.
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, modified := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case modified:
		return rev + " (modified)"
	}
	return rev
}
