package cluster

import "testing"

func TestProviderOfVendorVersions(t *testing.T) {
	for version, want := range map[string]string{
		"v1.33.1-eks-4096722": "eks", "v1.32.4-gke.1106000": "gke", "v1.29.10-aks.20240101": "aks",
		"v1.31.5+k3s1": "other", "v1.28.6+f1618d5": "other", "v1.35.4": "other",
	} {
		if got := providerOf(version); got != want {
			t.Errorf("providerOf(%q) = %q, want %q", version, got, want)
		}
	}
}

func TestSplitTagKeepsRegistryPorts(t *testing.T) {
	for image, want := range map[string][2]string{
		"registry.k8s.io/kube-apiserver:v1.35.4":           {"registry.k8s.io/kube-apiserver", "v1.35.4"},
		"localhost:5000/kube-proxy:v1.33.0-eks-1@sha256:a": {"localhost:5000/kube-proxy", "v1.33.0-eks-1"},
		"localhost:5000/etcd":                              {"localhost:5000/etcd", ""},
	} {
		repo, tag := splitTag(image)
		if repo != want[0] || tag != want[1] {
			t.Errorf("splitTag(%q) = %q, %q", image, repo, tag)
		}
	}
}
