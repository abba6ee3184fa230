package convert_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// notHandledByKubectlConvert lists the fixtures kubectl-convert cannot convert, with why: the
// oracle cannot vouch for them, so they are listed here rather than passing silently, and a
// fixture listed here that kubectl-convert handles fails the test.
var notHandledByKubectlConvert = map[string]string{
	"batch_v2alpha1_CronJob":               "Kubernetes 1.21 removed batch/v2alpha1 from the source tree: no kind is registered for it",
	"extensions_v1beta1_PodSecurityPolicy": "Kubernetes 1.25 removed PodSecurityPolicy from the source tree: no kind is registered for it",
	// kubectl-convert's scheme holds k8s.io/kubernetes' built-in groups only; convB's CRD
	// oracle checks these against apiextensions-apiserver's own conversion.
	"apiextensions.k8s.io_v1beta1_CustomResourceDefinition":                     "apiextensions.k8s.io is not in kubectl-convert's scheme",
	"apiextensions.k8s.io_v1beta1_CustomResourceDefinition_preserve-everywhere": "apiextensions.k8s.io is not in kubectl-convert's scheme",
	"apiregistration.k8s.io_v1beta1_APIService":                                 "apiregistration.k8s.io is not in kubectl-convert's scheme",
	"admissionregistration.k8s.io_v1beta1_MutatingAdmissionPolicy":              "1.35 registers no admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (the target's v1 is newer than the oracle)",
	"admissionregistration.k8s.io_v1beta1_MutatingAdmissionPolicyBinding":       "1.35 registers no admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding",
	"certificates.k8s.io_v1beta1_ClusterTrustBundle":                            "1.35 registers no certificates.k8s.io/v1 ClusterTrustBundle",
	"storagemigration.k8s.io_v1beta1_StorageVersionMigration":                   "1.35 registers no storagemigration.k8s.io/v1 StorageVersionMigration",
}

// divergesFromKubectlConvert lists the fields where a fixture's conversion knowingly differs
// from kubectl-convert's, with why: the test requires exactly these paths to differ, so a
// divergence that goes away, or a new one, fails it.
var divergesFromKubectlConvert = map[string]struct {
	paths  []string
	reason string
}{
	"autoscaling_v2beta1_HorizontalPodAutoscaler_container": {
		paths:  []string{"/spec/metrics/0/containerResource/container"},
		reason: "the v2beta1 conversion drops containerResource.container, which autoscaling/v2 requires; we keep it",
	},
}

// TestConversionIsFieldEqualToKubectlConvert runs kubectl-convert, built from the 1.35.4
// source the test API server runs, on every fixture and on our conversion of it: the two
// must agree field by field once the defaults of the versions passed through are applied
// (the old version's to the original, the new version's to both), as the API server
// serves a stored object.
func TestConversionIsFieldEqualToKubectlConvert(t *testing.T) {
	bin := filepath.Join(kubetest.Binaries(t), "kubectl-convert")
	k := kbtest.Builtin(t)
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			out := convertFixture(t, k, f)
			if f.wantManual {
				return
			}
			want, err := kubectlConvert(bin, f.path, out.To.APIVersion())
			reason, listed := notHandledByKubectlConvert[f.name]
			switch {
			case err != nil && !listed:
				t.Fatalf("kubectl-convert cannot convert %s; list it in notHandledByKubectlConvert with the reason if that is expected: %v", f.path, err)
			case err != nil:
				t.Logf("not checked by kubectl-convert: %s", reason)
				return
			case listed:
				t.Fatalf("kubectl-convert converts %s now: remove it from notHandledByKubectlConvert (%s)", f.path, reason)
			}
			// What the server serves is the old version's defaults, converted, then the new
			// version's defaults applied on read: a second pass at the same version adds those.
			want = reconvert(t, bin, want, out.To.APIVersion())
			ours := filepath.Join(t.TempDir(), f.name+".yaml")
			if err := os.WriteFile(ours, marshal(t, out.Object), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := kubectlConvert(bin, ours, out.To.APIVersion())
			if err != nil {
				t.Fatalf("kubectl-convert rejects our conversion: %v\n%s", err, marshal(t, out.Object))
			}
			diffs := fieldDiff("", want, got)
			if d, ok := divergesFromKubectlConvert[f.name]; ok {
				diffs = expectDivergence(t, diffs, d.paths, d.reason)
			}
			if len(diffs) > 0 {
				t.Errorf("our conversion differs from kubectl-convert's after defaulting (want = kubectl-convert of the original, got = of ours):\n%s\nours:\n%s",
					strings.Join(diffs, "\n"), marshal(t, out.Object))
			}
		})
	}
}

// expectDivergence fails unless every path in paths differs, and returns the other diffs.
func expectDivergence(t *testing.T, diffs, paths []string, reason string) []string {
	t.Helper()
	var rest []string
	seen := map[string]bool{}
	for _, d := range diffs {
		path, _, _ := strings.Cut(strings.TrimSpace(d), ":")
		if slices.Contains(paths, path) {
			seen[path] = true
			continue
		}
		rest = append(rest, d)
	}
	for _, p := range paths {
		if !seen[p] {
			t.Errorf("%s no longer differs from kubectl-convert: remove it from divergesFromKubectlConvert (%s)", p, reason)
		}
	}
	t.Logf("differs from kubectl-convert at %v, as listed: %s", paths, reason)
	return rest
}

// reconvert runs obj through kubectl-convert at apiVersion again, which applies that
// version's defaults.
func reconvert(t *testing.T, bin string, obj map[string]any, apiVersion string) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubectl-convert.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := kubectlConvert(bin, path, apiVersion)
	if err != nil {
		t.Fatalf("kubectl-convert rejects its own output: %v", err)
	}
	return again
}

// kubectlConvert converts the manifest at path to apiVersion, without a server, and decodes
// the result without the fields a conversion does not decide (status, creationTimestamp).
func kubectlConvert(bin, path, apiVersion string) (map[string]any, error) {
	cmd := exec.Command(bin, "--local", "-f", path, "--output-version", apiVersion, "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", cmd, err, stderr.String())
	}
	var obj map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil {
		return nil, fmt.Errorf("kubectl-convert printed no object (%w): %s %s", err, stdout.String(), stderr.String())
	}
	// For a kind it cannot convert, kubectl-convert says so on stderr, prints an empty List
	// and exits 0.
	if obj["kind"] == "List" {
		return nil, fmt.Errorf("%s converted nothing: %s", cmd, strings.TrimSpace(stderr.String()))
	}
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return obj, nil
}

// fieldDiff lists the JSON paths where got differs from want, each with both values.
func fieldDiff(path string, want, got any) []string {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		var out []string
		for _, k := range unionKeys(wm, gm) {
			out = append(out, fieldDiff(path+"/"+k, wm[k], gm[k])...)
		}
		return out
	}
	ws, wok := want.([]any)
	gs, gok := got.([]any)
	if wok && gok && len(ws) == len(gs) {
		var out []string
		for i := range ws {
			out = append(out, fieldDiff(fmt.Sprintf("%s/%d", path, i), ws[i], gs[i])...)
		}
		return out
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	return []string{fmt.Sprintf("  %s: want %s, got %s", path, w, g)}
}

func unionKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
