package files

import (
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func TestNarrowingBlanksOnlyDroppedSubtreesAndKeepsLineNumbers(t *testing.T) {
	drop := set("openAPIV3Schema", "env", "ports", "args")
	tests := []struct {
		name, in, want string
	}{
		{
			name: "a CRD schema goes, with its blank lines and comments, and its siblings stay",
			in:   "spec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        type: object\n\n        # c\n        properties: {a: {}}\n    served: true\n  - name: v2\n",
			want: "spec:\n  versions:\n  - name: v1\n    schema:\n\n\n\n\n\n    served: true\n  - name: v2\n",
		},
		{
			name: "an indentless sequence under a dropped key goes with it",
			in:   "containers:\n- name: c\n  env:\n  - name: A\n    value: b\n  image: x\n",
			want: "containers:\n- name: c\n\n\n\n  image: x\n",
		},
		{
			name: "a kept block scalar's text is kept even where it reads like a dropped key",
			in:   "annotations:\n  note: |\n    env: stays\n    ports: [80\n  other: 1\nenv: goes\n",
			want: "annotations:\n  note: |\n    env: stays\n    ports: [80\n  other: 1\n\n",
		},
		{
			name: "a dropped block scalar goes whole, quotes and all",
			in:   "c:\n  args:\n  - |\n    echo \"it's\n    done\n  image: x\n",
			want: "c:\n\n\n\n\n  image: x\n",
		},
		{
			name: "a quoted scalar in a dropped subtree goes with the lines it runs on to, whatever their indentation",
			in:   "c:\n  env: \"abc\n  image: evil\"\n  image: good\n",
			want: "c:\n\n\n  image: good\n",
		},
		{
			name: "a key on a sequence item's line is not dropped: the item's other keys share the line",
			in:   "- env: x\n  image: y\n",
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := narrow([]byte(tt.in), drop, nil)
			if tt.want == "" {
				if ok {
					t.Errorf("narrowed to %q, want the document parsed whole", got)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Errorf("narrowed (ok=%v):\n%q\nwant\n%q", ok, got, tt.want)
			}
			if strings.Count(string(got), "\n") != strings.Count(tt.in, "\n") {
				t.Error("line count changed")
			}
		})
	}
}

func TestNarrowingGivesUpWhereLinesCannotBeReadAlone(t *testing.T) {
	drop := set("env")
	for name, in := range map[string]string{
		"nothing to drop":                          "a: 1\nb: 2\n",
		"a tab-indented line":                      "a:\n\tb: 1\nenv: x\n",
		"a kept quoted scalar that runs on":        "name: \"a\n  b\"\nenv: x\n",
		"a kept flow collection that runs on":      "labels: {a: b,\n  c: d}\nenv: x\n",
		"a dropped line that may define an anchor": "env: &e x\nname: *e\n",
		"a dropped item that may define an anchor": "env:\n- &e {name: a}\nname: *e\n",
		"a dropped quoted scalar never closed":     "env: \"abc\nname: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			if got, ok := narrow([]byte(in), drop, nil); ok {
				t.Errorf("narrowed to %q, want the document parsed whole", got)
			}
		})
	}
}

// FuzzNarrowingReadsWhatAFullParseReads holds narrowing to its promise: wherever the whole
// document parses, the narrowed one, when narrowing applies and it parses, yields the same
// objects, images, CRDs, pre-flight observations and warnings. Containers' command and args
// are kept as parseYAML keeps them, where the document may run a component.
func FuzzNarrowingReadsWhatAFullParseReads(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  namespace: b\n  labels: {app.kubernetes.io/name: n}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata:\n      labels:\n        app.kubernetes.io/version: \"1.2\"\n    spec:\n      containers:\n      - name: c\n        image: x:1\n        env:\n        - {name: A, value: \"b\"}\n        ports:\n        - containerPort: 80\n      volumes: []\n",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: j}\nspec:\n  schedule: \"0 3 * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - name: j\n            args:\n            - |\n              echo \"it's\n            image: y:2\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    upgradescope.basit.engineer/ignore: eol-addon\n    upgradescope.basit.engineer/ignore-reason: |\n      env: kept\nspec:\n  containers:\n  - image: z\n    env: \"a\n    image: evil\"\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - &c {name: c, image: a}\n      initContainers:\n      - *c\n      volumes: [&v {name: x}]\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: g\n  names: {kind: K, plural: ks}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        description: 'runs on\n          here'\n        type: object\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver, namespace: kube-system}\nspec:\n  containers:\n  - name: kube-apiserver\n    command:\n    - kube-apiserver\n    - --feature-gates=A=true\n    env: [{name: X, value: y}]\n  volumes:\n  - {name: tmp, emptyDir: {}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - topologyKey: kubernetes.io/hostname\n            labelSelector: {matchLabels: {app: web}}\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n      volumes: [{name: tmp, emptyDir: {}}]\n      containers: [{name: c, image: x, args: [--a]}]\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: proxy, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers:\n      - name: kube-proxy\n        command: [\"/usr/local/bin/kube\\x2dproxy\", --proxy-mode=ipvs]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var full yaml.Node
		if yaml.Unmarshal(data, &full) != nil || len(full.Content) == 0 {
			return
		}
		whole := newFileDecoder("f.yaml", testOptions())
		n, ok := expand(full.Content[0], data)
		if !ok {
			return
		}
		whole.object(n, 0, "")
		_, kind := stringField(n, "kind")
		for k, drop := range dropped {
			if mayRunComponent(kind, data) {
				drop = droppedArgs[k]
			}
			narrowed, ok := narrow(data, drop, nil)
			var root yaml.Node
			if !ok || yaml.Unmarshal(narrowed, &root) != nil || len(root.Content) == 0 {
				continue
			}
			part := newFileDecoder("f.yaml", testOptions())
			pn, _ := expand(root.Content[0], narrowed)
			part.object(pn, 0, "")
			if !reflect.DeepEqual(whole.res, part.res) {
				t.Fatalf("narrowed document read differently:\n%s\nwhole:  %+v\nnarrow: %+v", narrowed, whole.res, part.res)
			}
		}
	})
}
