package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

func newAuditPolicyCommand(s streams) *cobra.Command {
	var bf bundleFlags
	var from, now string
	cmd := &cobra.Command{
		Use:   "audit-policy",
		Short: "Print the API server audit policy --audit-log needs: who called the APIs a cluster still loses, and nothing else",
		Long: `audit-policy prints an audit.k8s.io/v1 Policy for the API server's --audit-policy-file: the
requests to the resources of every API the knowledge base says is removed after --from, at
Metadata level (never a body), and nothing else, so the audit log stays small. --audit-log
reads the log it produces (docs/audit.md).`,
		Example: `  upgradescope audit-policy > /etc/kubernetes/audit-policy.yaml
  upgradescope audit-policy --from 1.29     # the oldest cluster runs 1.29
  upgradescope audit-policy --bundle kb.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			clock, err := parseNow(now)
			if err != nil {
				return err
			}
			opts, err := bf.engineOptions(cmd.Context())
			if err != nil {
				return err
			}
			eng, err := engine.New(cmd.Context(), append(opts, engine.WithToolVersion(version))...)
			if err != nil {
				return withLimitFlag(err)
			}
			if from == "" {
				if from, err = defaultPolicyFrom(eng.KB(), clock); err != nil {
					return err
				}
			} else if from, err = inventory.ParseTarget(from); err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			policy, err := audit.Policy(eng.KB().APIs(), from)
			if err != nil {
				return err
			}
			_, err = s.out.Write(policy)
			return err
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the oldest minor your clusters run: the policy logs the APIs removed after it (default: the minor before the oldest one EKS, GKE or AKS still supports, extended support included)")
	cmd.Flags().StringVar(&now, "now", "", "the day the default --from is judged on, as RFC 3339 (default: the current time)")
	_ = cmd.Flags().MarkHidden("now")
	bf.register(cmd)
	return cmd
}

// defaultPolicyFrom is the minor before the oldest one a managed provider still supports on
// now's day: a cluster there upgrading into support loses what the next minor removes.
func defaultPolicyFrom(k *kb.KB, now time.Time) (string, error) {
	oldest, ok := k.OldestSupported(now)
	if !ok {
		return "", fmt.Errorf("the knowledge base has no managed provider's minor still supported on %s: pass --from, the oldest minor your clusters run", now.Format(time.DateOnly))
	}
	v, err := inventory.ParseVersion(oldest)
	if err != nil || v.Minor == 0 {
		return "", fmt.Errorf("the knowledge base's oldest supported minor %q has none before it: pass --from", oldest)
	}
	v.Minor--
	return v.MinorString(), nil
}
