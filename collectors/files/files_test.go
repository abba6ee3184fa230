package files

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

var watched = map[string]bool{
	"extensions/v1beta1/Ingress":   true,
	"networking.k8s.io/v1/Ingress": true,
	"v1/Endpoints":                 true,
	"batch/v1beta1/CronJob":        true,
}

// testOptions is a small knowledge base: the watched kinds, a few stable ones, and the
// built-in groups they belong to.
func testOptions() Options {
	known := map[string]bool{
		"v1/ConfigMap": true, "v1/Service": true, "v1/Namespace": true, "v1/Pod": true,
		"apps/v1/Deployment": true, "batch/v1/CronJob": true, "networking.k8s.io/v1/IngressClass": true,
		"apiextensions.k8s.io/v1/CustomResourceDefinition": true,
	}
	for k := range watched {
		known[k] = true
	}
	groups := map[string]bool{"": true, "apps": true, "batch": true, "extensions": true, "networking.k8s.io": true, "apiextensions.k8s.io": true}
	return Options{Observe: kb.Observe{Watched: watched, Known: known, BuiltinGroups: groups}, TeamLabel: "team", Workers: 2}
}

// collect writes files into a fresh directory and walks it.
func collect(t *testing.T, files map[string]string) *Result {
	t.Helper()
	return collectWith(t, testOptions(), files)
}

// collectWith is collect with options.
func collectWith(t *testing.T, opts Options, files map[string]string) *Result {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Collect(dir, opts)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	return res
}

// refs flattens the recorded objects as "apiVersion Kind ns/name file:line <renderedFrom>".
func refs(res *Result) []string {
	var out []string
	for _, u := range res.APIUsage {
		av := u.APIVersion()
		for _, o := range u.Objects {
			s := av + " " + u.Kind + " " + o.Namespace + "/" + o.Name + " " + o.File + ":" + strconv.Itoa(o.Line)
			if o.RenderedFrom != "" {
				s += " <" + o.RenderedFrom + ">"
			}
			out = append(out, s)
		}
	}
	return out
}

const ingress = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: web\n"

func ing(name string) string { return strings.Replace(ingress, "%s", name, 1) }

func TestDecoderReadsWhatKubectlApplyReads(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		want     []string
		objects  int
		partial  bool
		warnings int
	}{
		{
			name:    "multi-document YAML with comment separators records the apiVersion line",
			files:   map[string]string{"a.yaml": "# header\n--- # first\n" + ing("one") + "--- # second\n" + ing("two")},
			want:    []string{"extensions/v1beta1 Ingress web/one a.yaml:3", "extensions/v1beta1 Ingress web/two a.yaml:9"},
			objects: 2,
		},
		{
			name:    "a UTF-8 byte order mark is ignored",
			files:   map[string]string{"bom.yaml": "\ufeff" + ing("bom")},
			want:    []string{"extensions/v1beta1 Ingress web/bom bom.yaml:1"},
			objects: 1,
		},
		{
			name:    "CRLF line endings decode like LF",
			files:   map[string]string{"crlf.yaml": strings.ReplaceAll(ing("crlf")+"---\n"+ing("crlf2"), "\n", "\r\n")},
			want:    []string{"extensions/v1beta1 Ingress web/crlf crlf.yaml:1", "extensions/v1beta1 Ingress web/crlf2 crlf.yaml:7"},
			objects: 2,
		},
		{
			name: "NDJSON yields one object per line",
			files: map[string]string{"s.json": `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"a","namespace":"x"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}
{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"c","namespace":"x"}}
`},
			want:    []string{"v1 Endpoints x/a s.json:1", "v1 Endpoints x/c s.json:3"},
			objects: 3,
		},
		{
			name:    "adjacent and pretty JSON objects are split",
			files:   map[string]string{"adj.json": "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"a\"}}{\n  \"kind\": \"Endpoints\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\"name\": \"b\"}\n}"},
			want:    []string{"v1 Endpoints /a adj.json:1", "v1 Endpoints /b adj.json:3"},
			objects: 2,
		},
		{
			name:    "duplicate keys: the last value wins, in YAML and JSON",
			files:   map[string]string{"dup.yaml": "apiVersion: v1\nkind: ConfigMap\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: dup\n", "dup.json": `{"apiVersion":"v1","kind":"ConfigMap","kind":"Endpoints","metadata":{"name":"d"}}`},
			want:    []string{"v1 Endpoints /d dup.json:1", "extensions/v1beta1 Ingress /dup dup.yaml:3"},
			objects: 2,
		},
		{
			name:    "anchors and merge keys supply apiVersion and kind",
			files:   map[string]string{"m.yaml": "base: &base\n  apiVersion: extensions/v1beta1\n  kind: Ingress\n<<: *base\nmetadata:\n  name: merged\n  namespace: &ns web\n"},
			want:    []string{"extensions/v1beta1 Ingress web/merged m.yaml:2"},
			objects: 1,
		},
		{
			name:    "kind: List items are expanded and null items skipped",
			files:   map[string]string{"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- null\n-\n- apiVersion: v1\n  kind: Endpoints\n  metadata: {name: e1, namespace: x}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n"},
			want:    []string{"v1 Endpoints x/e1 l.yaml:6"},
			objects: 2,
		},
		{
			name:    "typed lists are expanded too, in JSON",
			files:   map[string]string{"l.json": `{"apiVersion":"v1","kind":"EndpointsList","items":[null,{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e2"}}]}`},
			want:    []string{"v1 Endpoints /e2 l.json:1"},
			objects: 1,
		},
		{
			name:     "an unrendered template of a judged API is skipped and makes the scan partial",
			files:    map[string]string{"t.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {{- include \"x\" . | nindent 4 }}\n"},
			warnings: 1,
			partial:  true,
		},
		{
			name:     "an unrendered template whose apiVersion is templated makes the scan partial",
			files:    map[string]string{"i.yaml": "apiVersion: {{ include \"ingress.apiVersion\" . }}\nkind: Ingress\nmetadata:\n  name: {{ .Release.Name }}\n"},
			warnings: 1,
			partial:  true,
		},
		{
			name:     "a template whose first character is { is skipped as unrendered, not decoded as JSON",
			files:    map[string]string{"key.yaml": "{{- if .Values.bundles.urls }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-key\n{{- end }}\n"},
			warnings: 1,
		},
		{
			name:    "JSON that opens with white space and an object is still JSON",
			files:   map[string]string{"ws.json": "\n  {\"apiVersion\": \"v1\", \"kind\": \"Endpoints\", \"metadata\": {\"name\": \"w\"}}"},
			want:    []string{"v1 Endpoints /w ws.json:2"},
			objects: 1,
		},
		{
			name:     "binary junk is a warning that makes api-usage partial",
			files:    map[string]string{"junk.yaml": "\x00\x01\x02\xff\xfe key: [unterminated\n"},
			partial:  true,
			warnings: 1,
		},
		{
			name:  "documents that are not Kubernetes objects are skipped silently",
			files: map[string]string{"values.yaml": "replicaCount: 2\nimage:\n  tag: v1\n", "compose.yml": "services:\n  web:\n    image: nginx\n", "scalar.yaml": "just text\n", "seq.json": "[1, 2, 3]"},
		},
		{
			name:    "helm # Source: comments become renderedFrom",
			files:   map[string]string{"r.yaml": "---\n# Source: shop/templates/ingress.yaml\n" + ing("shop")},
			want:    []string{"extensions/v1beta1 Ingress web/shop r.yaml:3 <shop/templates/ingress.yaml>"},
			objects: 1,
		},
		{
			name:    "quoted values and trailing comments are read by the line scan",
			files:   map[string]string{"q.yaml": "apiVersion: \"v1\" # core\nkind: 'Endpoints'\nmetadata:\n  name: q\n"},
			want:    []string{"v1 Endpoints /q q.yaml:1"},
			objects: 1,
		},
		{
			name:    "a JSON document in a .yaml file and YAML in a .json file are both read",
			files:   map[string]string{"j.yaml": `{"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "j"}}`, "y.json": "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: y\n"},
			want:    []string{"v1 Endpoints /j j.yaml:1", "v1 Endpoints /y y.json:1"},
			objects: 2,
		},
		{
			name:    "the document end marker closes a document",
			files:   map[string]string{"e.yaml": ing("first") + "...\n" + ing("second")},
			want:    []string{"extensions/v1beta1 Ingress web/first e.yaml:1", "extensions/v1beta1 Ingress web/second e.yaml:7"},
			objects: 2,
		},
		{
			name:    "VCS metadata, node_modules and vendor are not walked; other extensions are ignored",
			files:   map[string]string{".git/x.yaml": ing("git"), "node_modules/x.yaml": ing("nm"), "vendor/x.yaml": ing("v"), "notes.txt": ing("txt"), "ok.YML": ing("ok")},
			want:    []string{"extensions/v1beta1 Ingress web/ok ok.YML:1"},
			objects: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := collect(t, tt.files)
			if got := refs(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("objects:\n got %q\nwant %q", got, tt.want)
			}
			if res.Objects != tt.objects {
				t.Errorf("counted %d objects, want %d", res.Objects, tt.objects)
			}
			if len(res.Warnings) != tt.warnings {
				t.Errorf("warnings = %v, want %d", res.Warnings, tt.warnings)
			}
			capability := apiUsageCapability(res)
			if capability.Partial != tt.partial {
				t.Errorf("api-usage partial = %v, want %v (%+v)", capability.Partial, tt.partial, capability)
			}
		})
	}
}

func TestWarningsNameFileAndLine(t *testing.T) {
	res := collect(t, map[string]string{"bad.yaml": ing("ok") + "---\napiVersion: v1\nkind: Endpoints\nmetadata:\n  name: x: y\n"})
	if len(res.Warnings) != 1 {
		t.Fatalf("warnings = %v, want 1", res.Warnings)
	}
	if got := res.Warnings[0].String(); !strings.HasPrefix(got, "bad.yaml:10: invalid YAML") {
		t.Errorf("warning = %q, want it to start with bad.yaml:10: invalid YAML", got)
	}
	doc := Inventory(res, testTime)
	if c := doc.Capabilities[inventory.CapAPIUsage]; !c.Partial || !reflect.DeepEqual(c.Skipped, []string{"bad.yaml:10"}) {
		t.Errorf("api-usage = %+v, want partial with bad.yaml:10 skipped", c)
	}
}

func TestAggregationCountsNamespacesAndCapsObjectRefs(t *testing.T) {
	var b strings.Builder
	for i := range inventory.MaxObjectRefs + 5 {
		b.WriteString("---\napiVersion: v1\nkind: Endpoints\nmetadata:\n  name: e" + strconv.Itoa(i) + "\n  namespace: ns" + strconv.Itoa(i%2) + "\n")
	}
	res := collect(t, map[string]string{"many.yaml": b.String()})
	if len(res.APIUsage) != 1 {
		t.Fatalf("usage = %+v", res.APIUsage)
	}
	u := res.APIUsage[0]
	if u.Count != 105 || len(u.Objects) != 100 || u.ObjectsOmitted != 5 {
		t.Errorf("count %d, objects %d, omitted %d; want 105, 100, 5", u.Count, len(u.Objects), u.ObjectsOmitted)
	}
	if !reflect.DeepEqual(u.Namespaces, map[string]int{"ns0": 53, "ns1": 52}) {
		t.Errorf("namespaces = %v", u.Namespaces)
	}
}

func TestResultsDoNotDependOnWorkerCount(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		name := filepath.Join(dir, "f"+strconv.Itoa(i)+".yaml")
		if err := os.WriteFile(name, []byte(ing("i"+strconv.Itoa(i))+"---\n"+ing("j"+strconv.Itoa(i))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o1, o7 := testOptions(), testOptions()
	o1.Workers, o7.Workers = 1, 7
	one, _ := Collect(dir, o1)
	many, _ := Collect(dir, o7)
	if !reflect.DeepEqual(one.APIUsage, many.APIUsage) {
		t.Error("1 and 7 workers recorded different objects or order")
	}
}

func TestHostileInputIsRefusedWithoutExhaustingMemory(t *testing.T) {
	dir := t.TempDir()
	// A 1 GiB line (a sparse file reads as zeros) and an alias bomb in a watched kind.
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("apiVersion: v1\nkind: ConfigMap\ndata:\n  x: "); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bomb := "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: bomb\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n"
		prev = n
	}
	if err := os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(bomb), 0o600); err != nil {
		t.Fatal(err)
	}
	// A 40 MiB JSON string value: past the document bound, so refused before it is buffered.
	value := strings.Repeat("a", 1<<20)
	jf, err := os.Create(filepath.Join(dir, "huge.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = jf.WriteString(`{"apiVersion":"v1","kind":"ConfigMap","data":{"x":"`)
	for range 40 {
		_, _ = jf.WriteString(value)
	}
	_, _ = jf.WriteString(`"}}`)
	jf.Close()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Collect(dir, testOptions())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(res); !reflect.DeepEqual(got, []string{"extensions/v1beta1 Ingress /bomb bomb.yaml:1"}) {
		t.Errorf("objects = %q, want the alias bomb's Ingress recorded without expanding it", got)
	}
	var sawHuge, sawJSON bool
	for _, w := range res.Warnings {
		sawHuge = sawHuge || w.File == "huge.yaml" && w.Partial && strings.Contains(w.Message, "larger than")
		sawJSON = sawJSON || w.File == "huge.json" && w.Partial && strings.Contains(w.Message, "larger than")
	}
	if !sawHuge || !sawJSON {
		t.Errorf("warnings = %v, want both oversized documents refused as partial", res.Warnings)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("decoding allocated %d MiB; hostile input must stay bounded", alloc>>20)
	}
}

func TestSymlinksAreFollowedToFilesAndReportedForDirectories(t *testing.T) {
	dir := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "real.yaml"), []byte(ing("linked")), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"file.yaml": filepath.Join(elsewhere, "real.yaml"), "sub": elsewhere, "gone.yaml": filepath.Join(elsewhere, "absent.yaml")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Collect(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(res); !reflect.DeepEqual(got, []string{"extensions/v1beta1 Ingress web/linked file.yaml:1"}) {
		t.Errorf("objects = %q, want the symlinked file's Ingress", got)
	}
	capability := apiUsageCapability(res)
	if !capability.Partial || !reflect.DeepEqual(capability.Skipped, []string{"gone.yaml:0", "sub:0"}) {
		t.Errorf("api-usage = %+v, want partial naming the unwalked directory and the dangling link", capability)
	}
}

func TestARootThatIsASymlinkToADirectoryIsWalked(t *testing.T) {
	real := t.TempDir()
	if err := os.WriteFile(filepath.Join(real, "i.yaml"), []byte(ing("x")), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "manifests")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	res, err := Collect(link, testOptions())
	if err != nil || res.Objects != 1 || res.Base != link {
		t.Errorf("Collect(symlink) = %d objects, base %q, %v; want 1 object under the link", res.Objects, res.Base, err)
	}
}

func TestOnlyRegularFilesAreReadAndAGrowingFileEnds(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := Collect(fifo, testOptions()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Collect(FIFO) = %v, want a refusal instead of a hang", err)
	}
	// In a walked directory the FIFO is not a regular file, so it is never opened.
	if err := os.WriteFile(filepath.Join(dir, "i.yaml"), []byte(ing("x")), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Collect(dir, testOptions())
	if err != nil || res.Objects != 1 {
		t.Errorf("Collect(dir with a FIFO) = %v objects, %v", res, err)
	}
}
