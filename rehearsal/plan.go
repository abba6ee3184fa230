package rehearsal

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/inventory"
)

// Reasons FromPlan gives for documents it cannot replay.
const (
	ReasonNoConversion = "no conversion"
	ReasonNotConverted = "not converted"
	ReasonInvalid      = "invalid"
)

// FromPlan turns a fix plan into the objects to replay: each document as the target would
// receive it (converted by fix when its API is not served, as written otherwise), with its
// file and line. A document fix could not convert (a choice for a person, a template, an
// object a GitOps tool renders) is skipped with fix's reasons; a kind: List is replayed item
// by item, as kubectl apply sends it. The plan must be scanned with fix.Options.KeepObjects,
// or it holds no objects to replay.
func FromPlan(plan *fix.Plan) ([]Object, []Skipped) {
	var objs []Object
	var skipped []Skipped
	for _, f := range plan.Files {
		file := filepath.ToSlash(f.Path)
		for _, d := range f.Docs {
			o, s := fromDoc(file, d)
			objs, skipped = append(objs, o...), append(skipped, s...)
		}
	}
	return objs, skipped
}

func fromDoc(file string, d fix.Doc) ([]Object, []Skipped) {
	// The object's first field, where scan names it, so both reports give the same line.
	src := inventory.RehearsalSource{File: file, Line: d.ObjectLine()}
	switch {
	case d.Skip != "":
		return nil, []Skipped{skipOf(d, src, ReasonNotConverted, d.Skip)}
	case len(d.Outcome.Manual) > 0:
		return nil, []Skipped{skipOf(d, src, ReasonNoConversion, remarks(d.Outcome.Manual))}
	case d.Object == nil:
		return nil, nil // a comment-only or empty document
	}
	node, original := d.Object, ""
	if d.Outcome.Object != nil {
		node, original = d.Outcome.Object, d.Outcome.From.APIVersion()
	}
	obj, err := Decode(node)
	if err != nil {
		return nil, []Skipped{skipOf(d, src, ReasonInvalid, err.Error())}
	}
	if obj.IsList() {
		return listItems(obj, node, src)
	}
	return []Object{{Obj: obj, OriginalAPIVersion: original, Source: src}}, nil
}

// listItems replays a List's items, each with the line it starts at.
func listItems(list *unstructured.Unstructured, node *yaml.Node, src inventory.RehearsalSource) ([]Object, []Skipped) {
	var objs []Object
	lines := itemLines(node)
	err := list.EachListItem(func(o runtime.Object) error {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return nil
		}
		s := src
		if i := len(objs); i < len(lines) {
			s.Line = lines[i]
		}
		objs = append(objs, Object{Obj: u, Source: s})
		return nil
	})
	if err != nil {
		return nil, []Skipped{{APIVersion: list.GetAPIVersion(), Kind: list.GetKind(), Source: src, Reason: ReasonInvalid, Message: err.Error()}}
	}
	return objs, nil
}

// itemLines are the lines the items of a List's node start at.
func itemLines(node *yaml.Node) []int {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == "items" && node.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, it := range node.Content[i+1].Content {
				lines = append(lines, it.Line)
			}
			return lines
		}
	}
	return nil
}

// Decode reads a YAML mapping node as the JSON object the API server receives: JSON in
// between gives the value types unstructured expects (int64, float64), which yaml.v3's int and
// float are not.
func Decode(node *yaml.Node) (*unstructured.Unstructured, error) {
	var v any
	if err := node.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("as JSON: %w", err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return obj, nil
}

// skipOf names a skipped document as fix read it (from its lines, for a template).
func skipOf(d fix.Doc, src inventory.RehearsalSource, reason, message string) Skipped {
	return Skipped{
		APIVersion: d.Ref.APIVersion, Kind: d.Ref.Kind, Namespace: d.Ref.Namespace, Name: d.Ref.Name,
		Source: src, Reason: reason, Message: message,
	}
}

func remarks(rs []convert.Remark) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.Path != "" {
			parts = append(parts, r.Path+": "+r.Message)
		} else {
			parts = append(parts, r.Message)
		}
	}
	return strings.Join(parts, "; ")
}
