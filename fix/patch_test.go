package fix

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// rewritten converts the one document in text by edit (a stand-in for a conversion step)
// and returns the rewritten text.
func rewritten(t *testing.T, text string, edit func(obj *yaml.Node)) string {
	t.Helper()
	docs, err := splitYAML([]byte(text))
	if err != nil || len(docs) != 1 {
		t.Fatalf("split: %v (%d documents)", err, len(docs))
	}
	d := docs[0].toDoc()
	doc, err := parse(&d)
	if err != nil {
		t.Fatal(err)
	}
	d.docNode, d.Object = doc, docRoot(doc)
	d.Outcome.Object = deepCopy(d.Object)
	edit(d.Outcome.Object)
	out, err := rewrite([]Doc{d})
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	return string(out)
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = deepCopy(ch)
	}
	return &c
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

func mapOf(kv ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
}

// ingressStep is what the Ingress step does to a path's backend, written here so the splice
// is tested without package convert's steps.
func ingressStep(obj *yaml.Node) {
	obj.Content[1].Value = "networking.k8s.io/v1"
	for _, rule := range get(obj, "spec", "rules").Content {
		for _, p := range get(rule, "http", "paths").Content {
			b := get(p, "backend")
			name, port := get(b, "serviceName"), get(b, "servicePort")
			port.Tag = "!!int"
			b.Content = []*yaml.Node{str("service"), mapOf(str("name"), name, str("port"), mapOf(str("number"), port))}
			p.Content = append(p.Content[:2], append([]*yaml.Node{str("pathType"), str("ImplementationSpecific")}, p.Content[2:]...)...)
		}
	}
}

const ingressYAML = `# Source: shop/templates/ingress.yaml
apiVersion: extensions/v1beta1   # old
kind: Ingress
metadata:
  name: shop
  annotations:
    kubernetes.io/ingress.class: "nginx"

spec:
  rules:
    - host: shop.example.com
      http:
        paths:
          # the root
          - path: /
            backend:
              serviceName: shop
              servicePort: 80
`

func TestTheSpliceChangesOnlyTheConvertedLines(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		edit       func(*yaml.Node)
		want       string
	}{
		{
			name: "an Ingress keeps its comments, quoting and blank line",
			text: ingressYAML, edit: ingressStep,
			want: strings.NewReplacer(
				"apiVersion: extensions/v1beta1   # old", "apiVersion: networking.k8s.io/v1   # old",
				"          - path: /\n            backend:\n              serviceName: shop\n              servicePort: 80\n",
				"          - path: /\n            pathType: ImplementationSpecific\n            backend:\n              service:\n                name: shop\n                port:\n                  number: 80\n",
			).Replace(ingressYAML),
		},
		{
			name: "a compact sequence stays compact",
			text: "apiVersion: v1\nkind: X\nspec:\n  list:\n  - a: 1\n  old: 2\n",
			edit: func(o *yaml.Node) {
				spec := get(o, "spec")
				spec.Content = append(spec.Content[:2], str("items"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{mapOf(str("b"), str("c"))}})
			},
			want: "apiVersion: v1\nkind: X\nspec:\n  list:\n  - a: 1\n  items:\n  - b: c\n",
		},
		{
			name: "a renamed key keeps its value and comment",
			text: "a:\n  old: 1 # why\n  b: 2\n",
			edit: func(o *yaml.Node) { get(o, "a").Content[0].Value = "new" },
			want: "a:\n  new: 1 # why\n  b: 2\n",
		},
		{
			name: "a flow mapping is written anew, still reading as the conversion",
			text: "a: {old: 1}\n",
			edit: func(o *yaml.Node) { get(o, "a").Content[0].Value = "new" },
			want: "a: {new: 1}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rewritten(t, tc.text, tc.edit); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
