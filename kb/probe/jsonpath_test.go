package probe

import (
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/client-go/util/jsonpath"
)

// The held-out check: for the same objects, a path finds exactly the values client-go's
// JSONPath (kubectl's, a maintained implementation written by others) finds for the same
// path written as JSONPath.
func TestAPathFindsWhatJSONPathFinds(t *testing.T) {
	objects := []string{deployment,
		`{"kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {"awsElasticBlockStore": {"volumeID": "vol-1"}, "capacity": {"storage": "1Gi"}}}`,
		`{"kind": "StorageClass", "metadata": {"name": "gp2", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "kubernetes.io/aws-ebs"}`,
		`{"kind": "Service", "metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "loadBalancerIP": "10.0.0.1", "ports": [{"port": 80}, {"port": 443, "name": "tls"}]}}`,
		`{"kind": "Node", "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/master": ""}}, "spec": {"taints": [{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}]}, "status": {"nodeInfo": {"containerRuntimeVersion": "docker://20.10.7"}}}`,
	}
	// Each path beside the same path written as client-go JSONPath by hand: dots in a key
	// escaped, and .* for every value of a map.
	paths := [][2]string{
		{"spec.template.spec.volumes[*].hostPath.path", "{.spec.template.spec.volumes[*].hostPath.path}"},
		{"spec.template.spec.volumes[*].gitRepo.repository", "{.spec.template.spec.volumes[*].gitRepo.repository}"},
		{"spec.template.spec.containers[*].volumeMounts[*].mountPath", "{.spec.template.spec.containers[*].volumeMounts[*].mountPath}"},
		{"spec.template.spec.containers[*].env[*].name", "{.spec.template.spec.containers[*].env[*].name}"},
		{"spec.template.spec.tolerations[*].key", "{.spec.template.spec.tolerations[*].key}"},
		{`metadata.annotations["kubernetes.io/ingress.class"]`, `{.metadata.annotations.kubernetes\.io/ingress\.class}`},
		{`metadata.annotations["seccomp.security.alpha.kubernetes.io/pod"]`, `{.metadata.annotations.seccomp\.security\.alpha\.kubernetes\.io/pod}`},
		{`metadata.labels["node-role.kubernetes.io/master"]`, `{.metadata.labels.node-role\.kubernetes\.io/master}`},
		{"metadata.labels[*]", "{.metadata.labels.*}"},
		{"spec.awsElasticBlockStore.volumeID", "{.spec.awsElasticBlockStore.volumeID}"},
		{"provisioner", "{.provisioner}"},
		{"spec.loadBalancerIP", "{.spec.loadBalancerIP}"},
		{"spec.ports[*].name", "{.spec.ports[*].name}"},
		{"spec.taints[*].key", "{.spec.taints[*].key}"},
		{"status.nodeInfo.containerRuntimeVersion", "{.status.nodeInfo.containerRuntimeVersion}"},
		{"spec.capacity[*]", "{.spec.capacity.*}"},
	}
	found := map[string]bool{}
	for _, raw := range objects {
		var obj any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			t.Fatal(err)
		}
		kind := obj.(map[string]any)["kind"].(string)
		for _, p := range paths {
			got := encodeAll(t, values(MustParsePath(p[0]).Find(obj)))
			want := encodeAll(t, jsonPathValues(t, p[1], obj))
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: found %q, JSONPath %s finds %q", kind, p[0], got, p[1], want)
			}
			found[p[0]] = found[p[0]] || len(got) > 0
		}
	}
	for _, p := range paths {
		if !found[p[0]] {
			t.Errorf("%s finds nothing in any object: the comparison says nothing about it", p[0])
		}
	}
}

func values(ms []Match) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m.Value
	}
	return out
}

// jsonPathValues runs a client-go JSONPath expression over obj.
func jsonPathValues(t *testing.T, expr string, obj any) []any {
	t.Helper()
	jp := jsonpath.New("probe").AllowMissingKeys(true)
	if err := jp.Parse(expr); err != nil {
		t.Fatalf("jsonpath %s: %v", expr, err)
	}
	results, err := jp.FindResults(obj)
	if err != nil {
		t.Fatalf("jsonpath %s: %v", expr, err)
	}
	var out []any
	for _, r := range results {
		for _, v := range r {
			out = append(out, v.Interface())
		}
	}
	return out
}

// encodeAll is values as sorted JSON, so both sides compare as multisets.
func encodeAll(t *testing.T, vs []any) []string {
	t.Helper()
	out := make([]string, len(vs))
	for i, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	slices.Sort(out)
	return out
}
