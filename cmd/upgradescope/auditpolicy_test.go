package main

import (
	"os"
	"strings"
	"testing"
)

// policyDay is the day docs/audit-policy.yaml was generated on: the oldest minor a managed
// provider supported then was 1.32, so the policy logs the APIs removed from 1.32 on.
const policyDay = "--now=2026-12-02T00:00:00Z"

// docs/audit-policy.yaml is audit-policy's output, so the docs cannot drift from the
// knowledge base; hack/kube-env.sh gives it to the test API servers, so the live tests run
// on it. -update rewrites it.
func TestTheDocumentedAuditPolicyIsWhatAuditPolicyPrints(t *testing.T) {
	const path = "../../docs/audit-policy.yaml"
	r := runCLI(t, "audit-policy", policyDay)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if *update {
		if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.stdout != string(want) {
		t.Errorf("audit-policy prints something else than %s (go test ./cmd/upgradescope -run %s -update, then read the diff):\n%s", path, t.Name(), r.stdout)
	}
}

func TestAuditPolicyLogsTheAPIsRemovedAfterTheOldestMinorYourClustersRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		// has and hasNot are resources the policy names or must not name; err is in stderr.
		has, hasNot []string
		err         string
	}{
		{"by default it starts after the minor before the oldest one a provider supports", []string{policyDay}, 0,
			[]string{"flowschemas, flowschemas/*, prioritylevelconfigurations", "servicecidrs"}, []string{"poddisruptionbudgets", "cronjobs"}, ""},
		{"--from an older minor adds what the minors after it removed", []string{policyDay, "--from", "1.24"}, 0,
			[]string{"poddisruptionbudgets", "cronjobs", "servicecidrs"}, []string{"ingresses"}, ""},
		{"--from a patch version reads its minor", []string{"--from", "1.37.2"}, 0,
			[]string{"resourceclaims"}, []string{"servicecidrs", "flowschemas"}, ""},
		{"--from that is no version is refused naming the flag", []string{"--from", "latest"}, 1, nil, nil, "--from"},
		{"--from past every removal is refused rather than logging everything", []string{"--from", "1.60"}, 1, nil, nil,
			"no API removed after 1.60"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"audit-policy"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.err) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.err)
			}
			for _, s := range tt.has {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("the policy lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(r.stdout, s) {
					t.Errorf("the policy names %q:\n%s", s, r.stdout)
				}
			}
		})
	}
}
