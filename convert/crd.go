package convert

import (
	"encoding/json"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CustomResourceDefinition apiextensions.k8s.io/v1beta1 → v1, as the conversion of
// k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1 does it through the internal type:
// the spec-wide version, validation, subresources, additionalPrinterColumns and
// selectableFields move into every entry of versions, a column's JSONPath is named jsonPath,
// and conversion.webhookClientConfig with conversionReviewVersions moves to
// conversion.webhook. kubectl-convert does not know CRDs (kubernetes/kubernetes#55801).
//
// Two things v1 requires that v1beta1 did not are a person's work, not a conversion's: a
// structural schema for every version, and pruning. v1beta1 keeps unknown fields unless
// preserveUnknownFields is false; v1 refuses preserveUnknownFields: true on create, so an object
// that left it unset or true converts only when its schemas keep unknown fields everywhere
// (x-kubernetes-preserve-unknown-fields on every object), and otherwise needs
// its owner to decide what v1 may prune.

const crdV1beta1, crdV1 = "apiextensions.k8s.io/v1beta1/CustomResourceDefinition", "apiextensions.k8s.io/v1/CustomResourceDefinition"

func init() { register(crdV1beta1, crdV1, crdToV1) }

// perVersionFields are the spec fields v1 moves into every version.
var perVersionFields = []string{"subresources", "additionalPrinterColumns", "selectableFields"}

func crdToV1(s *State) {
	spec := get(s.Obj, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode {
		s.Manual("/spec", s.Obj, "the CustomResourceDefinition has no spec")
		return
	}
	if isNull(get(spec, "scope")) {
		setAfter(spec, "names", "scope", str("Namespaced"))
		s.Note("/spec/scope", keyNode(s.Obj, "spec"), "scope written as v1beta1's default Namespaced: v1 requires it")
	}
	versions := crdVersions(s, spec)
	if versions == nil {
		return
	}
	if validation := del(spec, "validation"); !isNull(validation) {
		each(versions, func(_ int, v *yaml.Node) { setAfter(v, "storage", "schema", deepCopy(validation)) })
	}
	for _, f := range perVersionFields {
		if val := del(spec, f); !isNull(val) {
			each(versions, func(_ int, v *yaml.Node) { set(v, f, deepCopy(val)) })
		}
	}
	each(versions, func(i int, v *yaml.Node) {
		each(get(v, "additionalPrinterColumns"), func(_ int, col *yaml.Node) { rename(col, "JSONPath", "jsonPath") })
	})
	crdConversionToV1(s, spec)
	crdSchemasToV1(s, spec, versions)
}

// crdVersions turns the spec-wide version into the list v1 requires, or returns the list.
func crdVersions(s *State, spec *yaml.Node) *yaml.Node {
	version := del(spec, "version")
	versions := get(spec, "versions")
	if versions != nil && versions.Kind == yaml.SequenceNode && len(versions.Content) > 0 {
		return versions
	}
	if isNull(version) {
		s.Manual("/spec/versions", spec, "the CustomResourceDefinition names no version")
		return nil
	}
	versions = seq(mapping("name", str(version.Value), "served", boolean(true), "storage", boolean(true)))
	setAfter(spec, "scope", "versions", versions)
	return versions
}

// crdConversionToV1 moves the webhook's settings under conversion.webhook. v1beta1 defaults
// the review versions of a webhook to [v1beta1]; v1 requires them.
func crdConversionToV1(s *State, spec *yaml.Node) {
	conv := get(spec, "conversion")
	clientConfig := del(conv, "webhookClientConfig")
	reviews := del(conv, "conversionReviewVersions")
	if scalarAt(conv, "strategy") == "Webhook" && isNull(reviews) {
		reviews = strs("v1beta1")
		s.Note("/spec/conversion/webhook/conversionReviewVersions", conv, "conversionReviewVersions written as v1beta1's default [v1beta1]: v1 requires them")
	}
	if isNull(clientConfig) && isNull(reviews) {
		return
	}
	webhook := mapping()
	if !isNull(clientConfig) {
		set(webhook, "clientConfig", clientConfig)
	}
	if !isNull(reviews) {
		set(webhook, "conversionReviewVersions", reviews)
	}
	setAfter(conv, "strategy", "webhook", webhook)
}

// crdSchemasToV1 checks what v1 requires of every version's schema, and settles pruning.
func crdSchemasToV1(s *State, spec, versions *yaml.Node) {
	keepsUnknown := true
	each(versions, func(i int, v *yaml.Node) {
		name := scalarAt(v, "name")
		root := getPath(v, "schema", "openAPIV3Schema")
		if isNull(root) {
			s.Manual(pointer("spec", "versions", i, "schema"), firstWritten(v, keyNode(s.Obj, "spec")), "version %s has no schema: v1 requires a structural schema for every version", name)
			return
		}
		if err := structural(root); err != nil {
			s.Manual(pointer("spec", "versions", i, "schema", "openAPIV3Schema"), root, "the schema of version %s is not structural, which v1 requires: %v", name, err)
		}
		keepsUnknown = keepsUnknown && preservesEverywhere(root)
	})
	puf := get(spec, "preserveUnknownFields")
	if !isNull(puf) && puf.Value == "false" {
		return
	}
	if !keepsUnknown {
		s.Manual("/spec/preserveUnknownFields", spec,
			"preserveUnknownFields is true (v1beta1's default when unset), which v1 refuses: decide which unknown fields v1 may prune, then set it to false and mark the objects that keep unknown fields with x-kubernetes-preserve-unknown-fields")
		return
	}
	at := firstWritten(keyNode(spec, "preserveUnknownFields"), keyNode(s.Obj, "spec"))
	set(spec, "preserveUnknownFields", boolean(false))
	s.Note("/spec/preserveUnknownFields", at,
		"preserveUnknownFields written as false (v1 refuses true): every object of the schemas keeps unknown fields (x-kubernetes-preserve-unknown-fields), so v1 prunes nothing either")
}

// structural says why a schema is not structural, as the API server's validation of a v1 CRD
// does (k8s.io/apiextensions-apiserver/pkg/apiserver/schema), or nil.
func structural(root *yaml.Node) error {
	v, err := toValue(root)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var external apiextv1beta1.JSONSchemaProps
	if err := json.Unmarshal(raw, &external); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextv1beta1.Convert_v1beta1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&external, &internal, nil); err != nil {
		return fmt.Errorf("convert schema: %w", err)
	}
	ss, err := schema.NewStructural(&internal)
	if err != nil {
		return err
	}
	if errs := schema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// preservesEverywhere says whether every object schema keeps unknown fields, where v1 would
// prune them: an object without additionalProperties or x-kubernetes-preserve-unknown-fields.
func preservesEverywhere(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.MappingNode {
		return true
	}
	object := scalarAt(n, "type") == "object" || get(n, "properties") != nil
	if object && get(n, "additionalProperties") == nil && scalarAt(n, "x-kubernetes-preserve-unknown-fields") != "true" {
		return false
	}
	for i := 1; i < len(n.Content); i += 2 {
		key, v := n.Content[i-1].Value, n.Content[i]
		switch key {
		case "properties", "patternProperties", "definitions", "dependencies":
			for j := 1; j < len(v.Content); j += 2 {
				if !preservesEverywhere(v.Content[j]) {
					return false
				}
			}
		case "items", "additionalProperties", "not":
			if !preservesEverywhere(v) {
				return false
			}
		case "allOf", "anyOf", "oneOf":
			for _, it := range v.Content {
				if !preservesEverywhere(it) {
					return false
				}
			}
		}
	}
	return true
}
