// Package rehearsal replays collected objects into an API server of the target version, with
// server-side apply and dryRun=All, and records what the server refuses
// (inventory.Rehearsal). It starts that server from the user's binaries or uses a test
// cluster the user names; it never writes to the cluster being scanned. The server is
// started by the package's own starter (controlplane.go), not controller-runtime's envtest,
// which links html/template: 31.8 MB more binary and 10 MiB more peak memory on every scan.
package rehearsal

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/inventory"
)

// Object is one object to replay, as a collector produced it: from a file (converted by `fix`
// when its API is not served by the target), a live cluster's full-object collection, or a
// Helm release's manifest.
type Object struct {
	Obj *unstructured.Unstructured
	// OriginalAPIVersion is the apiVersion the source wrote, when conversion changed it.
	OriginalAPIVersion string
	Source             inventory.RehearsalSource
	// FieldManager is the manager the object had (live: its applier in managedFields); ""
	// applies as "upgradescope-rehearsal".
	FieldManager string
}

// Skipped is an object a collector could not turn into an Object (no conversion, a Helm
// template): the replay records it as not replayed, so the verdict is unknown.
type Skipped struct {
	APIVersion, Kind, Namespace, Name string
	Source                            inventory.RehearsalSource
	Reason, Message                   string
}
