package render

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/client-go/kubernetes/scheme"
)

// Served says whether the target serves an entry of Helm's API version set: a group/version
// ("networking.k8s.io/v1beta1", core "v1") or a group/version/Kind
// ("networking.k8s.io/v1beta1/Ingress", "v1/ConfigMap"), as a template asks
// .Capabilities.APIVersions.Has. nil serves everything.
type Served func(entry string) bool

// Capabilities is what the templates see on target ("1.36" or "v1.36.0"): KubeVersion at its
// .0 patch, and APIVersions as a cluster's discovery would list them: Helm's default version
// set (the group/versions client-go knows) and each kind at them, less what served refuses.
// Listing kinds too matters: charts ask Has "policy/v1/PodDisruptionBudget" as often as
// Has "policy/v1", and Helm's default set alone answers no to every kind.
func Capabilities(target string, served Served) (*common.Capabilities, error) {
	v := strings.TrimPrefix(target, "v")
	if strings.Count(v, ".") == 1 {
		v += ".0"
	}
	kv, err := common.ParseKubeVersion(v)
	if err != nil {
		return nil, fmt.Errorf("target %q is not a Kubernetes version: %w", target, err)
	}
	var set common.VersionSet
	for _, entry := range knownEntries() {
		if served == nil || served(entry) {
			set = append(set, entry)
		}
	}
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	caps.APIVersions = set
	return caps, nil
}

// knownEntries is Helm's default version set and every kind the client-go scheme registers
// at those versions, sorted, built once.
var knownEntries = sync.OnceValue(func() []string {
	seen := map[string]bool{}
	for _, gv := range common.DefaultVersionSet {
		seen[gv] = true
	}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		gv := gvk.GroupVersion().String()
		if seen[gv] && !strings.HasSuffix(gvk.Kind, "List") && !metaKinds[gvk.Kind] {
			seen[gv+"/"+gvk.Kind] = true
		}
	}
	out := make([]string, 0, len(seen))
	for e := range seen {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
})

// metaKinds are the option and status types the scheme registers at every version, which no
// discovery document lists as a kind.
var metaKinds = map[string]bool{
	"CreateOptions": true, "DeleteOptions": true, "GetOptions": true, "ListOptions": true,
	"PatchOptions": true, "UpdateOptions": true, "WatchEvent": true, "Status": true,
	"APIGroup": true, "APIGroupList": true, "APIResourceList": true, "APIVersions": true,
}
