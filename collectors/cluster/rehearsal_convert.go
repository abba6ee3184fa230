package cluster

import (
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// Reasons a collected object is not replayed (rehearsal.Skipped.Reason).
const (
	SkipBound        = "bound"
	SkipForbidden    = "forbidden"
	SkipNoConversion = "no conversion"
	SkipUnreadable   = "unreadable"
	SkipListFailed   = "list failed"
)

// servedBy says whether target serves apiVersion/kind. An API the knowledge base does not
// describe (a custom resource, a built-in served by every target) counts as served: the
// rehearsal server says otherwise if it must.
func servedBy(k *kb.KB, apiVersion, kind, target string) bool {
	known, served := convert.Lookup(k, apiVersion, kind, target)
	return !known || served
}

// toTarget converts obj, written at an apiVersion the target does not serve, along the
// knowledge base's route with package convert, through a YAML node. An object that needs a
// person (a dropped field, no replacement, no known step) is an error naming why.
func toTarget(k *kb.KB, obj map[string]any, target string) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) != 1 {
		return nil, fmt.Errorf("read object as YAML: %v", err)
	}
	return convertNode(k, doc.Content[0], target)
}

// convertNode converts a document's top mapping node and decodes the result.
func convertNode(k *kb.KB, node *yaml.Node, target string) (*unstructured.Unstructured, error) {
	out := convert.Object(k, node, target)
	if len(out.Manual) > 0 || out.Object == nil {
		msgs := make([]string, 0, len(out.Manual))
		for _, m := range out.Manual {
			msgs = append(msgs, strings.TrimPrefix(m.Path+": ", ": ")+m.Message)
		}
		return nil, fmt.Errorf("%s cannot be converted for %s: %s", out.From, target, strings.Join(msgs, "; "))
	}
	return rehearsal.Decode(out.Object)
}
