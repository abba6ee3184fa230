package inventory

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
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

// hostile builds a document of valid rows with one shape pushed past a bound.
func hostile(t *testing.T, mutate func(d *Document)) []byte {
	t.Helper()
	d := validDocument()
	mutate(d)
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func repeatedRows(n int) []APIUsage {
	rows := make([]APIUsage, n)
	for i := range rows {
		rows[i] = APIUsage{Group: "extensions", Version: "v1beta1", Kind: "Ingress", Count: 1, Namespaces: map[string]int{"web": 1}}
	}
	return rows
}

func manyNamespaces(n int) map[string]int {
	m := make(map[string]int, n)
	for i := range n {
		m["ns-"+strconv.Itoa(i)] = 1
	}
	return m
}

func TestSchemaRefusesEveryShapePastItsBoundNamingTheJSONPointer(t *testing.T) {
	long := strings.Repeat("x", MaxStringLength+1)
	for _, tc := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"apiUsage rows past MaxAPIUsage", hostile(t, func(d *Document) { d.APIUsage = repeatedRows(MaxAPIUsage + 1) }),
			"/apiUsage: maxItems: got more than 5,000, want 5,000"},
		{"a row counting namespaces past MaxNamespaceCounts", hostile(t, func(d *Document) { d.APIUsage[0].Namespaces = manyNamespaces(MaxNamespaceCounts + 1) }),
			"/apiUsage/0/namespaces: maxProperties: got more than 10,000, want 10,000"},
		{"an object name past MaxStringLength", hostile(t, func(d *Document) { d.APIUsage[0].Objects[0].Name = long }),
			"/apiUsage/0/objects/0/name: maxLength: got 4,097, want 4,096"},
		{"a namespace key past MaxStringLength", hostile(t, func(d *Document) { d.APIUsage[0].Namespaces = map[string]int{long: 1} }),
			"/apiUsage/0/namespaces: property name: maxLength: got 4,097, want 4,096"},
		{"a capability skipping past MaxSkipped", hostile(t, func(d *Document) {
			d.Capabilities[CapCRDs] = Capability{Available: true, Partial: true, Skipped: make([]string, MaxSkipped+1)}
		}), "/capabilities/crds/skipped: maxItems: got more than 1,000, want 1,000"},
		{"namespaces past MaxNamespaces", hostile(t, func(d *Document) { d.Namespaces = make([]Namespace, MaxNamespaces+1) }),
			"/namespaces: maxItems: got more than 50,000, want 50,000"},
		{"CRD versions past MaxCRDVersions", hostile(t, func(d *Document) {
			d.CRDs = []CRD{{Group: "example.com", Kind: "Widget", Versions: make([]CRDVersion, MaxCRDVersions+1)}}
		}), "/crds/0/versions: maxItems: got more than 100, want 100"},
		{"an unknown top-level field", []byte(`{"schemaVersion": 1, "junk": "` + long + `"}`),
			"/junk: additional property not allowed"},
		{"more JSON values than MaxValues", hostile(t, func(d *Document) {
			d.APIUsage = repeatedRows(MaxValues/MaxNamespaceCounts + 1)
			for i := range d.APIUsage {
				d.APIUsage[i].Namespaces = manyNamespaces(MaxNamespaceCounts)
			}
		}), ": more than 200,000 JSON values in the document, want at most 200,000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.doc)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Validate: got %v, want a SchemaError", err)
			}
			if len(se.Problems) != 1 || !strings.Contains(se.Problems[0], tc.want) || !strings.HasPrefix(se.Problems[0], "/") {
				t.Errorf("problems = %q, want one naming %q", se.Problems, tc.want)
			}
		})
	}
}

func TestSchemaRefusesUnknownFieldsInEveryObject(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"top level", `"source":"files"`, `"source":"files","extra":1`, "/extra: additional property not allowed"},
		{"a Helm release", `"chart":"b"`, `"chart":"b","extra":1`, "/helmReleases/0/extra: additional property not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := string(hostile(t, func(d *Document) { d.HelmReleases = []HelmRelease{{Name: "a", Chart: "b"}} }))
			bad := strings.Replace(data, tc.from, tc.to, 1)
			if bad == data {
				t.Fatalf("%q not in %s", tc.from, data)
			}
			if err := Validate([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSchemaStatesTheGoBounds holds schema.json and the Go constants in step: each bound is
// where the table says, every string has a maxLength, every array a maxItems, and every
// object is closed or bounded.
func TestSchemaStatesTheGoBounds(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(SchemaJSON(), &schema); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pointer string
		want    int
	}{
		{"/properties/apiUsage/maxItems", MaxAPIUsage},
		{"/properties/apiAuthorshipUnknown/maxItems", MaxAPIUsage},
		{"/$defs/helmRelease/properties/manifestApis/maxItems", MaxAPIUsage},
		{"/$defs/crd/properties/usage/maxItems", MaxAPIUsage},
		{"/$defs/apiUsage/properties/namespaces/maxProperties", MaxNamespaceCounts},
		{"/$defs/apiUsage/properties/objects/maxItems", MaxObjectRefs},
		{"/$defs/capability/properties/skipped/maxItems", MaxSkipped},
		{"/properties/capabilities/maxProperties", MaxCapabilities},
		{"/properties/deprecatedCalls/maxItems", MaxListItems},
		{"/properties/helmReleases/maxItems", MaxListItems},
		{"/properties/gitopsCharts/maxItems", MaxListItems},
		{"/properties/workloadImages/maxItems", MaxListItems},
		{"/properties/ingressClasses/maxItems", MaxListItems},
		{"/properties/nodes/maxItems", MaxListItems},
		{"/properties/controlPlane/maxItems", MaxListItems},
		{"/properties/crds/maxItems", MaxListItems},
		{"/properties/namespaces/maxItems", MaxNamespaces},
		{"/properties/filesExcluded/maxItems", MaxExcludedPaths},
		{"/$defs/workloadImage/properties/versions/maxItems", MaxImageVersions},
		{"/$defs/imageVersion/properties/namespaces/maxItems", MaxImageNamespaces},
		{"/$defs/imageVersion/properties/labelSets/maxItems", MaxLabelSets},
		{"/$defs/imageVersion/properties/labelSets/items/maxProperties", MaxLabels},
		{"/$defs/imageVersion/properties/objects/maxItems", MaxImageObjectRefs},
		{"/$defs/node/properties/names/maxItems", MaxNodeNames},
		{"/$defs/controlPlaneComponent/properties/nodes/maxItems", MaxNodeNames},
		{"/$defs/crd/properties/versions/maxItems", MaxCRDVersions},
		{"/$defs/crd/properties/storedVersions/maxItems", MaxCRDVersions},
		{"/properties/auditCalls/properties/callers/maxItems", MaxAuditCallers},
		{"/properties/auditCalls/properties/omitted/maxItems", MaxAuditAPIs},
		{"/properties/auditCalls/properties/sources/maxItems", MaxAuditSources},
		{"/properties/auditCalls/properties/malformedAt/maxItems", MaxAuditMalformed},
		{"/properties/auditCalls/properties/kubectl/maxItems", MaxKubectlVersions},
		{"/$defs/auditCaller/properties/sourceRanges/maxItems", MaxAuditRanges},
		{"/$defs/kubectlClient/properties/users/maxItems", MaxKubectlUsers},
		{"/properties/preflight/properties/disruptionBudgets/maxItems", MaxPreflightItems},
		{"/properties/preflight/properties/placements/maxItems", MaxPreflightItems},
		{"/properties/preflight/properties/webhooks/maxItems", MaxPreflightItems},
		{"/properties/preflight/properties/apiServices/maxItems", MaxPreflightItems},
		{"/properties/preflight/properties/conversions/maxItems", MaxPreflightItems},
		{"/properties/preflight/properties/components/maxItems", MaxPreflightItems},
		{"/$defs/nodeState/properties/systems/maxItems", MaxPreflightItems},
		{"/$defs/disruptionBudget/properties/pods/maxItems", MaxPreflightNames},
		{"/$defs/disruptionBudget/properties/workloads/maxItems", MaxPreflightNames},
		{"/$defs/nameList/properties/names/maxItems", MaxPreflightNames},
		{"/$defs/component/properties/nodes/maxItems", MaxPreflightNames},
		{"/$defs/podList/properties/objects/maxItems", MaxObjectRefs},
		{"/$defs/webhook/properties/rules/maxItems", MaxWebhookRules},
		{"/$defs/webhook/properties/rules/items/properties/operations/maxItems", MaxWebhookRules},
		{"/$defs/webhook/properties/rules/items/properties/apiGroups/maxItems", MaxWebhookRules},
		{"/$defs/webhook/properties/rules/items/properties/apiVersions/maxItems", MaxWebhookRules},
		{"/$defs/webhook/properties/rules/items/properties/resources/maxItems", MaxWebhookRules},
		{"/$defs/component/properties/featureGates/maxItems", MaxComponentSettings},
		{"/$defs/component/properties/flags/maxItems", MaxComponentSettings},
		{"/properties/rehearsal/properties/rejections/maxItems", MaxRehearsalItems},
		{"/properties/rehearsal/properties/notReplayed/maxItems", MaxRehearsalItems},
		{"/$defs/rehearsalObject/properties/message/maxLength", MaxRehearsalMessage},
		{"/properties/chartAdvice/maxItems", MaxChartAdvice},
		{"/$defs/chartAdvice/properties/versions/maxItems", MaxChartVersionsJudged},
		{"/$defs/chartVersionJudged/properties/apis/maxItems", MaxChartVersionAPIs},
	} {
		if got := at(schema, tc.pointer); got != float64(tc.want) {
			t.Errorf("%s = %v, want %d", tc.pointer, got, tc.want)
		}
	}
	var walk func(ptr string, n any)
	walk = func(ptr string, n any) {
		switch n := n.(type) {
		case map[string]any:
			checkBounded(t, ptr, n)
			for k, v := range n {
				walk(ptr+"/"+k, v)
			}
		case []any:
			for i, v := range n {
				walk(ptr+"/"+strconv.Itoa(i), v)
			}
		}
	}
	walk("", schema)
}

func checkBounded(t *testing.T, ptr string, n map[string]any) {
	t.Helper()
	switch n["type"] {
	case "string":
		// A rehearsal's message is cut shorter, at MaxRehearsalMessage.
		if n["maxLength"] != float64(MaxStringLength) && n["maxLength"] != float64(MaxRehearsalMessage) && n["pattern"] == nil {
			t.Errorf("%s: a string without maxLength %d", ptr, MaxStringLength)
		}
	case "array":
		if n["maxItems"] == nil {
			t.Errorf("%s: an array without maxItems", ptr)
		}
	case "object":
		_, isMap := n["additionalProperties"].(map[string]any)
		switch {
		case isMap && (n["maxProperties"] == nil || at(n, "/propertyNames/maxLength") != float64(MaxStringLength)):
			t.Errorf("%s: a map without maxProperties and propertyNames.maxLength", ptr)
		case !isMap && n["additionalProperties"] != false:
			t.Errorf("%s: an object open to unknown properties", ptr)
		}
	}
}

// at follows a JSON pointer of plain names through decoded JSON.
func at(v any, pointer string) any {
	for _, name := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

func TestAddCountsEveryObjectAndListsNamespacesAndObjectsUpToTheirBounds(t *testing.T) {
	u := APIUsage{Group: "extensions", Version: "v1beta1", Kind: "Ingress", Namespaces: map[string]int{}}
	total := MaxNamespaceCounts + 3
	for i := range total {
		u.Add(ObjectRef{Namespace: "ns-" + strconv.Itoa(i), Name: "web"})
	}
	u.Add(ObjectRef{Namespace: "ns-0", Name: "again"}) // a listed namespace keeps counting
	if u.Count != total+1 || len(u.Namespaces) != MaxNamespaceCounts || u.NamespacesOmitted != 3 || u.Namespaces["ns-0"] != 2 {
		t.Errorf("count %d, %d namespaces, %d omitted, ns-0 %d; want %d, %d, 3, 2", u.Count, len(u.Namespaces), u.NamespacesOmitted, u.Namespaces["ns-0"], total+1, MaxNamespaceCounts)
	}
	if len(u.Objects) != MaxObjectRefs || u.ObjectsOmitted != total+1-MaxObjectRefs {
		t.Errorf("%d objects, %d omitted; want %d, %d", len(u.Objects), u.ObjectsOmitted, MaxObjectRefs, total+1-MaxObjectRefs)
	}
	data := hostile(t, func(d *Document) { d.APIUsage = []APIUsage{u} })
	if err := Validate(data); err != nil {
		t.Errorf("a row at its bounds is refused: %v", err)
	}
}

func TestCountValuesCountsWhatTheValueBoundCounts(t *testing.T) {
	for _, tt := range []struct {
		json string
		want int
	}{
		{`{"a": [1, "x", null, {"b": true}]}`, 7},
		{`[]`, 1},
		{`{"keys": {"are": "not values"}}`, 3},
		{`{"cut": [1, 2`, 4},
	} {
		if got := CountValues([]byte(tt.json)); got != tt.want {
			t.Errorf("CountValues(%s) = %d, want %d", tt.json, got, tt.want)
		}
	}
}
