package gitops

import "k8s.io/apimachinery/pkg/util/validation"

// validNamespace: a destination namespace is free text to the API server, and one that is no
// namespace name must not stand for a place a chart deploys into.
func validNamespace(ns string) bool {
	return len(validation.IsDNS1123Label(ns)) == 0
}
