package convert_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// fuzzCRD seeds the fuzzer with a CustomResourceDefinition and one of its objects in a file:
// each document of an input is tried as the CRD of every other.
const fuzzCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - {name: v1beta1, served: false, storage: false, schema: {openAPIV3Schema: &s {type: object, properties: {spec: {type: object}}}}}
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: *s}}
---
apiVersion: example.com/v1beta1
kind: Widget
metadata: {name: w}
spec: {size: 3}
`

// fuzzMaxDocs bounds the documents of one input that are converted: 25 targets each, and each
// document as the CRD of every other.
const fuzzMaxDocs = 4

// FuzzConvertNeverPanics converts whatever YAML the fuzzer makes of the fixtures, for every
// target from 1.16 to 1.40 and as a custom resource: no step may panic on any shape of YAML, the
// input must come back unchanged, and a converted object must encode and parse again, into
// plain values too when the input does (no key written twice).
func FuzzConvertNeverPanics(f *testing.F) {
	k := kbtest.Builtin(f)
	paths, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.yaml"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, seed := range []string{
		fuzzCRD,
		"apiVersion: extensions/v1beta1\nkind: Ingress\nspec: &s {backend: {serviceName: a, servicePort: 80}, rules: [*s]}\n",
		"apiVersion: extensions/v1beta1\nkind: Ingress\nspec:\n  <<: {backend: {serviceName: a, servicePort: 80}}\n",
		"apiVersion: apps/v1beta1\nkind: Deployment\nspec: [a]\n",
		"apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nspec: {selector: ~}\n",
		"apiVersion: extensions/v1beta1\nkind: Ingress\nspec: {backend: {serviceName: a, servicePort: 80, service: {name: b}}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs := parseDocs(data)
		for _, obj := range docs {
			before := encode(obj)
			var v any
			decodes := obj.Decode(&v) == nil
			for minor := 16; minor <= 40; minor++ {
				out := convert.Object(k, obj, fmt.Sprintf("1.%d", minor))
				checkOutcome(t, out, decodes)
			}
			for _, crd := range docs {
				checkOutcome(t, convert.CustomResource(obj, crd, "1.37"), decodes)
			}
			if after := encode(obj); !bytes.Equal(before, after) {
				t.Fatalf("the input changed:\n%s\nbecame\n%s", before, after)
			}
		}
	})
}

// parseDocs is the top nodes of the first documents of data that parse.
func parseDocs(data []byte) []*yaml.Node {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for len(docs) < fuzzMaxDocs {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		if len(doc.Content) == 1 {
			docs = append(docs, doc.Content[0])
		}
	}
	return docs
}

// checkOutcome fails when a converted object does not encode, or its encoding does not parse
// (into plain values, when decodes says the input did).
func checkOutcome(t *testing.T, out convert.Outcome, decodes bool) {
	t.Helper()
	if out.Object == nil {
		return
	}
	if len(out.Manual) > 0 {
		t.Fatalf("an object came back with remarks for a person: %+v", out.Manual)
	}
	b, err := yaml.Marshal(out.Object)
	if err != nil {
		t.Fatalf("the converted object does not encode: %v", err)
	}
	var back yaml.Node
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatalf("the converted object does not parse again: %v\n%s", err, b)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); decodes && err != nil {
		t.Fatalf("the converted object does not decode as the input did: %v\n%s", err, b)
	}
}

// encode is n's encoding, or nil when the encoder refuses it (nothing to compare then).
func encode(n *yaml.Node) []byte {
	b, err := yaml.Marshal(n)
	if err != nil {
		return nil
	}
	return b
}
