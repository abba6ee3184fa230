package inventory

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func validDocument() *Document {
	return &Document{
		SchemaVersion: SchemaVersion,
		Source:        SourceFiles,
		ClusterID:     "files",
		CollectedAt:   time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Capabilities:  map[string]Capability{CapAPIUsage: {Available: true}},
		APIUsage: []APIUsage{{
			Group: "extensions", Version: "v1beta1", Kind: "Ingress", Count: 1,
			Namespaces: map[string]int{"web": 1},
			Objects:    []ObjectRef{{Namespace: "web", Name: "shop", File: "a.yaml", Line: 3}},
		}},
	}
}

func TestADocumentWrittenByThisPackageValidatesAndRoundTrips(t *testing.T) {
	want := validDocument()
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the document:\n got %+v\nwant %+v", got, want)
	}
}

func TestSchemaErrorsNameEveryJSONPointer(t *testing.T) {
	doc := `{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z",
	  "capabilities": {"api-usage": {"available": "yes"}},
	  "apiUsage": [
	    {"group": "", "version": "v1", "kind": "Pod", "count": 1, "namespaces": {}},
	    {"group": "apps", "version": "v1", "kind": "Deployment", "count": "three", "namespaces": {}}
	  ]}`
	err := Validate([]byte(doc))
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Validate: got %v, want a SchemaError", err)
	}
	want := []string{"/apiUsage/1/count: got string, want integer", "/capabilities/api-usage/available: got string, want boolean"}
	if !reflect.DeepEqual(se.Problems, want) {
		t.Errorf("problems = %q\nwant %q", se.Problems, want)
	}
}

func TestSchemaRefusesMissingFieldsAndUnknownSources(t *testing.T) {
	err := Validate([]byte(`{"schemaVersion": 2, "source": "satellite", "apiUsage": []}`))
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SchemaError", err)
	}
	joined := strings.Join(se.Problems, "\n")
	for _, want := range []string{"/schemaVersion", "/source", "missing properties"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q do not mention %q", joined, want)
		}
	}
}

func TestGitopsChartsAreValidated(t *testing.T) {
	doc := validDocument()
	doc.GitopsCharts = []GitopsChart{{
		Tool: ToolArgoCD, Namespace: "argocd", Name: "ingress", TargetNamespace: "ingress-nginx",
		Chart: "ingress-nginx", Version: "4.*", VersionKind: VersionRange,
	}}
	data, _ := json.Marshal(doc)
	if err := Validate(data); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	bad := strings.Replace(string(data), `"tool":"argocd"`, `"tool":"jenkins"`, 1)
	if err := Validate([]byte(bad)); err == nil || !strings.Contains(err.Error(), "/gitopsCharts/0/tool") {
		t.Errorf("Validate(unknown tool) = %v, want an error at /gitopsCharts/0/tool", err)
	}
}

func TestSyntaxErrorsNameTheLine(t *testing.T) {
	err := Validate([]byte("{\n  \"schemaVersion\": 1,\n  \"source\": files\n}"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 3:") {
		t.Errorf("Validate = %v, want an error naming line 3", err)
	}
}

func TestReadFileNamesTheFileAndRefusesOversizedInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schemaVersion": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("ReadFile = %v, want an error naming %s", err, bad)
	}
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxDocumentBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("ReadFile(oversized) = %v, want a size error", err)
	}
}

func TestHashIgnoresCollectionTime(t *testing.T) {
	a, b := validDocument(), validDocument()
	b.CollectedAt = b.CollectedAt.Add(time.Hour)
	ha, _ := a.Hash()
	hb, _ := b.Hash()
	if ha != hb {
		t.Errorf("hashes differ only by collectedAt: %s vs %s", ha, hb)
	}
	b.APIUsage[0].Count = 2
	if hc, _ := b.Hash(); hc == ha {
		t.Error("hash did not change when an observation changed")
	}
}
