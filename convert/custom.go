package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"

	yaml "go.yaml.in/yaml/v3"
)

// CustomResource converts a custom resource written at a version its CustomResourceDefinition
// no longer serves to a served version whose schema is the same (the common v1beta1 → v1
// promotion, where only the version's name changed): only apiVersion changes. crd is the
// apiextensions.k8s.io/v1 CustomResourceDefinition of obj's group and kind, as a document's
// top mapping. The served version chosen is the storage version when its schema matches, else
// the first served one that does. What the CRD's schemas do not show to be the same fields
// (schemas that differ, a version without one, a version the CRD does not list) comes back
// Manual naming why, with obj untouched. An object whose version the CRD serves comes back with
// a zero Outcome (To == From, Object nil). target is the minor being upgraded to; a CRD's
// versions do not depend on it, it is kept for symmetry with Object.
func CustomResource(obj *yaml.Node, crd *yaml.Node, target string) Outcome {
	from := ParseGVK(scalarAt(obj, "apiVersion"), scalarAt(obj, "kind"))
	out := Outcome{From: from, To: from}
	versions := getPath(crd, "spec", "versions")
	old := crdVersion(versions, from.Version)
	if old != nil && scalarAt(old, "served") == "true" {
		return out
	}
	manual := func(format string, args ...any) Outcome {
		out.Manual = []Remark{remark("", keyNode(obj, "apiVersion"), format, args...)}
		return out
	}
	crdName := scalarAt(get(crd, "metadata"), "name")
	if old == nil {
		return manual("the CustomResourceDefinition %s does not list version %s, so nothing shows which fields it had: convert the object by hand", crdName, from.Version)
	}
	oldSchema := getPath(old, "schema", "openAPIV3Schema")
	if isNull(oldSchema) {
		return manual("version %s of the CustomResourceDefinition %s has no schema, so nothing shows which fields it had: convert the object by hand", from.Version, crdName)
	}
	// A conversion webhook may change more than apiVersion between identical schemas (move a
	// value from one field to another), and only the webhook knows.
	if scalarAt(getPath(crd, "spec", "conversion"), "strategy") == "Webhook" {
		return manual("the CustomResourceDefinition %s converts %s through a webhook, which may change fields even where schemas match: convert the object by hand or read it back from the cluster at a served version", crdName, from.Version)
	}
	to := sameSchemaServed(versions, oldSchema)
	if to == nil {
		return manual("no version the CustomResourceDefinition %s serves has the schema of %s: the fields differ, convert the object by hand or through the CRD's conversion webhook", crdName, from.Version)
	}
	// Only apiVersion changes: fields a merge key brings in need no reading.
	copied, err := copyObject(obj, true)
	if err != nil {
		return manual("%v", err)
	}
	out.To = GVK{Group: from.Group, Version: scalarAt(to, "name"), Kind: from.Kind}
	out.Object = copied
	setScalar(out.Object, "apiVersion", out.To.APIVersion())
	out.Notes = []Remark{remark("/apiVersion", keyNode(obj, "apiVersion"),
		"%s and %s of the CustomResourceDefinition %s have identical schemas: only apiVersion changes", from.Version, out.To.Version, crdName)}
	return out
}

// crdVersion is the entry of versions named name, or nil.
func crdVersion(versions *yaml.Node, name string) *yaml.Node {
	var found *yaml.Node
	each(versions, func(_ int, v *yaml.Node) {
		if found == nil && scalarAt(v, "name") == name {
			found = v
		}
	})
	return found
}

// sameSchemaServed is the served version whose schema equals schema, the storage version
// first, or nil.
func sameSchemaServed(versions, schema *yaml.Node) *yaml.Node {
	want, err := toValue(schema)
	if err != nil {
		return nil
	}
	var first, storage *yaml.Node
	each(versions, func(_ int, v *yaml.Node) {
		if scalarAt(v, "served") != "true" {
			return
		}
		got, err := toValue(getPath(v, "schema", "openAPIV3Schema"))
		if err != nil || !reflect.DeepEqual(got, want) {
			return
		}
		if first == nil {
			first = v
		}
		if storage == nil && scalarAt(v, "storage") == "true" {
			storage = v
		}
	})
	if storage != nil {
		return storage
	}
	return first
}

// CRDDigest is what CustomResource reads of a CustomResourceDefinition, each version's schema
// replaced by a digest of its JSON value: two schemas are the same exactly when their digests
// are, and a caller holding the CRDs of a large repository keeps a few lines of each instead
// of its schemas, which are most of its bytes. CustomResource answers the same for a CRD and
// its digest.
func CRDDigest(crd *yaml.Node) *yaml.Node {
	var versions []*yaml.Node
	each(getPath(crd, "spec", "versions"), func(_ int, v *yaml.Node) {
		d := mapping("name", str(scalarAt(v, "name")), "served", str(scalarAt(v, "served")), "storage", str(scalarAt(v, "storage")))
		if schema := getPath(v, "schema", "openAPIV3Schema"); !isNull(schema) {
			set(d, "schema", mapping("openAPIV3Schema", str(schemaDigest(schema))))
		}
		versions = append(versions, d)
	})
	spec := mapping("versions", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: versions})
	if strategy := scalarAt(getPath(crd, "spec", "conversion"), "strategy"); strategy != "" {
		set(spec, "conversion", mapping("strategy", str(strategy)))
	}
	return mapping("metadata", mapping("name", str(scalarAt(get(crd, "metadata"), "name"))), "spec", spec)
}

// schemaDigest is the sha256 of a schema's JSON value (map keys sorted), or of its YAML
// error, which then equals nothing valid.
func schemaDigest(schema *yaml.Node) string {
	v, err := toValue(schema)
	if err != nil {
		return "undecodable: " + err.Error()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
