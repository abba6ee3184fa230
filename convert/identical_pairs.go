package convert

// Pairs whose versions have the same fields (k8s.io/api types.go, json names compared) and the
// same defaults (pkg/apis/<group>/<version>/defaults.go of Kubernetes 1.35, kube-aggregator's
// for APIService): only apiVersion changes.
var identicalPairs = [][2]string{
	// rbac.authorization.k8s.io: Subject and RoleRef default the same API groups in both.
	{"rbac.authorization.k8s.io/v1beta1/Role", "rbac.authorization.k8s.io/v1/Role"},
	{"rbac.authorization.k8s.io/v1beta1/ClusterRole", "rbac.authorization.k8s.io/v1/ClusterRole"},
	{"rbac.authorization.k8s.io/v1beta1/RoleBinding", "rbac.authorization.k8s.io/v1/RoleBinding"},
	{"rbac.authorization.k8s.io/v1beta1/ClusterRoleBinding", "rbac.authorization.k8s.io/v1/ClusterRoleBinding"},
	// scheduling.k8s.io: preemptionPolicy defaults to PreemptLowerPriority in both.
	// Both convert through the same internal PodSecurityPolicy, with the same defaults; the
	// policy/v1beta1 one was removed in 1.25 without a replacement, so this serves 1.16–1.24.
	{"extensions/v1beta1/PodSecurityPolicy", "policy/v1beta1/PodSecurityPolicy"},
	{"scheduling.k8s.io/v1beta1/PriorityClass", "scheduling.k8s.io/v1/PriorityClass"},
	{"coordination.k8s.io/v1beta1/Lease", "coordination.k8s.io/v1/Lease"},
	// apiregistration.k8s.io: service.port defaults to 443 in both.
	{"apiregistration.k8s.io/v1beta1/APIService", "apiregistration.k8s.io/v1/APIService"},
	// storage.k8s.io: StorageClass (reclaimPolicy Delete, volumeBindingMode Immediate) and
	// CSIDriver (attachRequired true, fsGroupPolicy ReadWriteOnceWithFSType, …) default the
	// same in v1beta1 and v1; the alpha kinds have no defaults.
	{"storage.k8s.io/v1beta1/CSIDriver", "storage.k8s.io/v1/CSIDriver"},
	{"storage.k8s.io/v1beta1/CSINode", "storage.k8s.io/v1/CSINode"},
	{"storage.k8s.io/v1beta1/StorageClass", "storage.k8s.io/v1/StorageClass"},
	{"storage.k8s.io/v1alpha1/VolumeAttachment", "storage.k8s.io/v1/VolumeAttachment"},
	{"storage.k8s.io/v1beta1/VolumeAttachment", "storage.k8s.io/v1/VolumeAttachment"},
	{"storage.k8s.io/v1alpha1/CSIStorageCapacity", "storage.k8s.io/v1beta1/CSIStorageCapacity"},
	{"storage.k8s.io/v1beta1/CSIStorageCapacity", "storage.k8s.io/v1/CSIStorageCapacity"},
	{"storage.k8s.io/v1alpha1/VolumeAttributesClass", "storage.k8s.io/v1/VolumeAttributesClass"},
	{"storage.k8s.io/v1beta1/VolumeAttributesClass", "storage.k8s.io/v1/VolumeAttributesClass"},
	{"storagemigration.k8s.io/v1beta1/StorageVersionMigration", "storagemigration.k8s.io/v1/StorageVersionMigration"},
	// Request-only kinds: a manifest of one is a request body (a test's, a script's).
	{"admission.k8s.io/v1beta1/AdmissionReview", "admission.k8s.io/v1/AdmissionReview"},
	{"authentication.k8s.io/v1beta1/TokenReview", "authentication.k8s.io/v1/TokenReview"},
	{"authorization.k8s.io/v1beta1/SelfSubjectAccessReview", "authorization.k8s.io/v1/SelfSubjectAccessReview"},
	{"authorization.k8s.io/v1beta1/SelfSubjectRulesReview", "authorization.k8s.io/v1/SelfSubjectRulesReview"},
}

func init() {
	for _, p := range identicalPairs {
		register(p[0], p[1], identical)
	}
	// v1beta1 names a SubjectAccessReview's groups "group", v1 "groups".
	register("authorization.k8s.io/v1beta1/SubjectAccessReview", "authorization.k8s.io/v1/SubjectAccessReview", subjectAccessReviewToV1)
	register("authorization.k8s.io/v1beta1/LocalSubjectAccessReview", "authorization.k8s.io/v1/LocalSubjectAccessReview", subjectAccessReviewToV1)
}

func subjectAccessReviewToV1(s *State) {
	rename(get(s.Obj, "spec"), "group", "groups")
}
