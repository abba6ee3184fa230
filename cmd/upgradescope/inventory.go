package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/charts"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

func newInventoryCommand(s streams) *cobra.Command {
	var filesPath, now, teamLabel string
	var quiet bool
	var policies []string
	var lf liveFlags
	var fb filesBudget
	var bf bundleFlags
	var ef excludeFlags
	var cf chartFlags
	var af auditFlags
	var targets []string
	cmd := &cobra.Command{
		Use:   "inventory [--files PATH]",
		Short: "Collect the inventory document (a live cluster, or manifests) and print it as JSON",
		Example: `  upgradescope inventory > inventory.json
  upgradescope inventory --files ./rendered > inventory.json
  upgradescope inventory --files ./rendered --policy ./my-pack > inventory.json
  upgradescope inventory --advise-charts --target 1.37 > inventory.json
  upgradescope inventory --audit-log /var/log/kubernetes/audit/ > inventory.json
  upgradescope eval --inventory inventory.json --target 1.37`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGCForOneShot()
			clock, err := parseNow(now)
			if err != nil {
				return err
			}
			ex, err := ef.forFiles(filesPath, "")
			if err != nil {
				return err
			}
			// The kb bundle decides which kinds a collector lists, so a newer kb changes the
			// inventory too, and a custom pack adds the probes and images it declares.
			opts, err := bf.engineOptions(cmd.Context())
			if err != nil {
				return err
			}
			for _, p := range policies {
				opts = append(opts, engine.WithPolicy(p))
			}
			rep := newProgress(s, quiet)
			defer rep.Close()
			eng, err := loadEngine(cmd.Context(), rep, append(opts, engine.WithToolVersion(version)))
			if err != nil {
				return err
			}
			var doc *inventory.Document
			var values charts.Values
			if cf.advise {
				lf.values = &values
			}
			if filesPath == "" {
				doc, _, err = lf.collectLive(cmd.Context(), s, rep, eng, teamLabel, clock)
			} else {
				doc, err = collectFilesWithin(s, rep, eng, filesPath, teamLabel, clock, filesBudget{maxMiB: fb.maxMiB, timeout: lf.timeout, exclude: ex, values: &values})
			}
			if err != nil {
				return err
			}
			if err := af.collect(cmd.Context(), s, rep, doc, clock, lf.timeout); err != nil {
				return err
			}
			if cf.advise {
				minors, err := inventoryTargets(targets, doc)
				if err != nil {
					return err
				}
				if err := cf.run(cmd.Context(), rep, eng, doc, values, minors, clock); err != nil {
					return err
				}
			}
			rep.Close()
			enc := json.NewEncoder(s.out)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(doc)
		},
	}
	cmd.Flags().StringVar(&filesPath, "files", "", "rendered manifests: a directory (walked) or one file")
	cmd.Flags().StringArrayVar(&policies, "policy", nil, "custom rule pack whose declared probes and images to observe: a directory or bundle .tar.gz rooted at upgradescope/custom/<name> (repeatable)")
	cmd.Flags().StringVar(&teamLabel, "team-label", "team", "Namespace label whose value names the team that owns it")
	cmd.Flags().StringVar(&now, "now", "", "collection time as RFC 3339 (default: the current time)")
	_ = cmd.Flags().MarkHidden("now")
	registerFilesBudget(cmd, &fb)
	ef.register(cmd)
	lf.register(cmd)
	lf.registerTimeout(cmd)
	bf.register(cmd)
	registerQuiet(cmd, &quiet)
	cf.register(cmd)
	af.register(cmd, true)
	cmd.Flags().StringSliceVar(&targets, "target", nil, "target minor(s) --advise-charts judges chart versions at (default: the minor after the cluster's)")
	return cmd
}

// inventoryTargets are the minors the inventory's chart advice judges at: --target, else the
// minor after the cluster's version, which files mode does not have.
func inventoryTargets(flag []string, doc *inventory.Document) ([]string, error) {
	out, err := parseTargets(flag)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if t := inventory.DefaultTarget(doc.ServerVersion); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--advise-charts needs --target when the inventory has no server version (files mode)")
	}
	return out, nil
}
