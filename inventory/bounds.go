package inventory

// Bounds of the document. schema.json states each of them (TestSchemaStatesTheGoBounds holds
// the two in step), Validate refuses a document past any of them before it is decoded, and
// the collectors stop at them, counting what they leave out, so an inventory they write is
// never one the schema refuses. Each is chosen from the worst real shape: a 100,000-object
// cluster with 10,000 namespaces (the Kubernetes scalability limit) and a repository of
// thousands of services (hack/corpus many-images) stay far below every one.
const (
	// MaxAPIUsage is how many group/version/kind rows one list holds (apiUsage,
	// apiAuthorshipUnknown, orphanUsage, a release's manifestApis, a CRD's usage). Rows are per kind the
	// knowledge base flags or does not know: a few dozen on a real cluster.
	MaxAPIUsage = 5000
	// MaxNamespaceCounts is how many namespaces one APIUsage row counts; objects in
	// namespaces past it are counted in NamespacesOmitted.
	MaxNamespaceCounts = 10000
	// MaxSkipped is how many entries one capability's skipped list holds.
	MaxSkipped = 1000
	// MaxCapabilities is how many capabilities a document holds: one per collector step.
	MaxCapabilities = 64
	// MaxListItems bounds the other lists: releases, charts, images, CRDs, nodes groups,
	// control-plane components, ingress classes and deprecated-call rows.
	MaxListItems = 10000
	// MaxExcludedPaths is how many excluded paths a files inventory lists; the rest are
	// counted in FilesExcludedOmitted.
	MaxExcludedPaths = 1000
	// MaxNamespaces is how many namespaces the namespaces list names.
	MaxNamespaces = 50000
	// MaxImageVersions is how many versions of one repository are listed, and
	// MaxImageNamespaces how many namespaces one version names.
	MaxImageVersions   = 10000
	MaxImageNamespaces = 10000
	// MaxCRDVersions bounds a CRD's versions and storedVersions.
	MaxCRDVersions = 100
	// MaxLabels bounds a label set: it holds the recommended labels only.
	MaxLabels = 16
	// MaxStringLength bounds every string and map key, in characters. Kubernetes names are at
	// most 253; the longest strings are file paths (PATH_MAX is 4096) and capability reasons.
	MaxStringLength = 4096
	// MaxValues is how many JSON values (objects, arrays, strings, numbers, booleans, nulls)
	// a document holds in all. The lists above multiply: without it a document of 5,000 rows
	// of 10,000 namespaces each fits every other bound and decodes into gigabytes. The
	// inventories of the 100k-object bench corpora hold 17,000 to 26,000 values.
	MaxValues = 200_000
)

// CapSkipped keeps a capability's skipped list within MaxSkipped: past it, the last entry
// says how many more were skipped, so the list still tells the whole count.
func CapSkipped(skipped []string) []string {
	if len(skipped) <= MaxSkipped {
		return skipped
	}
	kept := skipped[: MaxSkipped-1 : MaxSkipped-1]
	return append(kept, printer.Sprintf("and %d more", len(skipped)-len(kept)))
}

// BoundString cuts s to MaxStringLength characters. Only a hostile or broken manifest has a
// longer name, namespace, label or path (Kubernetes allows 253 for names, 63 for labels); it
// is kept recognisable rather than dropped, so the object is still counted.
func BoundString(s string) string {
	if len(s) <= MaxStringLength {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxStringLength {
			return s[:i]
		}
		n++
	}
	return s
}

// bounded is r with every string within MaxStringLength.
func (r ObjectRef) bounded() ObjectRef {
	r.Kind, r.Namespace, r.Name = BoundString(r.Kind), BoundString(r.Namespace), BoundString(r.Name)
	r.File, r.RenderedFrom = BoundString(r.File), BoundString(r.RenderedFrom)
	if r.Ignore != nil {
		r.Ignore = &IgnoreAnnotation{Rules: BoundString(r.Ignore.Rules), Reason: BoundString(r.Ignore.Reason)}
	}
	return r
}
