package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestImportsCoverAPI fails when k8s.io/api gains a group/version package genkb does not
// register, so a new API can never be silently missing from the knowledge base.
func TestImportsCoverAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.GoFiles}}", "k8s.io/api/...").Output()
	if err != nil {
		t.Fatalf("go list k8s.io/api/...: %v", err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, files, _ := strings.Cut(line, " ")
		if strings.Contains(files, "register.go") {
			want = append(want, path)
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasPrefix(p, "k8s.io/api/") {
			got = append(got, p)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("genkb registers\n%s\nbut k8s.io/api has\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(addToScheme) != len(got) {
		t.Errorf("%d imports but %d AddToScheme entries", len(got), len(addToScheme))
	}
}

func TestSupplementEntriesNeedCitationsAndLoseToGeneratedData(t *testing.T) {
	apis := map[string]entry{"policy/v1beta1/PodSecurityPolicy": {Source: "k8s.io/api"}}
	err := mergeSupplement(apis, []byte(`{"entries": [{"group": "policy", "version": "v1beta1", "kind": "PodSecurityPolicy", "removed": "1.25", "citations": ["https://x"]}]}`))
	if err != nil || apis["policy/v1beta1/PodSecurityPolicy"].Source != "k8s.io/api" {
		t.Errorf("generated entry replaced by the supplement: %v %+v", err, apis)
	}
	err = mergeSupplement(map[string]entry{}, []byte(`{"entries": [{"group": "x", "version": "v1", "kind": "Y", "removed": "1.25"}]}`))
	if err == nil || !strings.Contains(err.Error(), "no citation") {
		t.Errorf("uncited entry accepted: %v", err)
	}
}

func TestHorizonComesFromTheReleaseVersion(t *testing.T) {
	m, err := metaFor("v0.37.2")
	if err != nil || m["horizon"] != "1.37" {
		t.Errorf("metaFor(v0.37.2) = %v, %v", m, err)
	}
	if _, err := metaFor("v0.38.0-alpha.1"); err == nil {
		t.Error("a pre-release k8s.io/api was accepted")
	}
}

func TestAnObjectIsReplacedByAnObjectNeverByAList(t *testing.T) {
	tests := []struct {
		name      string
		kind, tag string
		want      string
	}{
		{name: "IngressClass tagged with IngressClassList, as k8s.io/api tags it, is replaced by IngressClass", kind: "IngressClass", tag: "IngressClassList", want: "IngressClass"},
		{name: "a list is replaced by a list", kind: "IngressClassList", tag: "IngressClassList", want: "IngressClassList"},
		{name: "a correct tag is kept", kind: "Ingress", tag: "Ingress", want: "Ingress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvk := schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1beta1", Kind: tt.kind}
			r := replacementOf(gvk, schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: tt.tag})
			if r.Kind != tt.want || r.Version != "v1" {
				t.Errorf("replacement of %s = %v, want networking.k8s.io/v1 %s", tt.kind, r, tt.want)
			}
		})
	}
}
