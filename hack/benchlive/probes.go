package main

import "github.com/upgradescope/upgradescope/probe"

// kbProbes mirrors the probes the knowledge base will declare, until the engine answers its
// own (Engine.Probes): four on the pod template of every workload, four on other kinds.
func kbProbes() (*probe.Set, error) {
	specs := []probe.Spec{
		{ID: "host-path", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true},
		{ID: "toleration-keys", PodTemplate: true, Path: "spec.tolerations[*].key", Values: true},
		{ID: "master-node-selector", PodTemplate: true, Path: `spec.nodeSelector["node-role.kubernetes.io/master"]`},
		{ID: "seccomp-annotation", PodTemplate: true, Path: `metadata.annotations["seccomp.security.alpha.kubernetes.io/pod"]`},
		{ID: "service-load-balancer-ip", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerIP"},
		{ID: "storageclass-provisioner", Kinds: []string{"storage.k8s.io/StorageClass"}, Path: "provisioner", Values: true},
		{ID: "pv-aws-ebs", Kinds: []string{"core/PersistentVolume"}, Path: "spec.awsElasticBlockStore"},
		{ID: "ingress-class-annotation", Kinds: []string{"networking.k8s.io/Ingress"}, Path: `metadata.annotations["kubernetes.io/ingress.class"]`},
	}
	declared := make([]probe.Declared, len(specs))
	for i, s := range specs {
		declared[i] = probe.Declared{ID: "kb/" + s.ID, Spec: s}
	}
	return probe.NewSet(declared)
}
