package fix

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzPatchReadsAsTheConversion mutates a document's tree as a conversion step would (a key
// renamed, an entry removed, added or reshaped, a scalar changed) and checks the property
// the splice promises: the rewritten document reads, as kubectl's reader splits it and yaml
// decodes it, as the converted tree, and every byte outside it is the file's. A document the
// splice and the re-encoding both cannot rewrite is refused, never written wrong.
func FuzzPatchReadsAsTheConversion(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "convert", "testdata", "fixtures", "*.yaml"))
	for i, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), uint8(i), uint16(i*7))
		}
	}
	f.Add(ingressYAML, uint8(4), uint16(9))
	f.Add("a: {b: 1}\nc:\n- d: 2\n  e: 'x'\n", uint8(1), uint16(1))
	f.Fuzz(func(t *testing.T, text string, op uint8, at uint16) {
		file := []byte("# before\nkind: A\n---\n" + text + "\n---\nkind: B # after\n")
		docs, err := splitYAML(file)
		if err != nil || len(docs) < 3 {
			return
		}
		d := docs[1].toDoc()
		doc, err := parse(&d)
		if err != nil || docRoot(doc) == nil || hasAnchors(doc) {
			return // a document with aliases is listed for a person, never spliced
		}
		d.docNode, d.Object = doc, docRoot(doc)
		conv := copyTree(d.Object)
		mutate(conv, op, int(at))
		want, err := jsonValue(conv)
		if err != nil {
			return
		}
		d.Outcome.Object = conv
		f := File{Before: file, Docs: []Doc{docs[0].toDoc(), d, docs[len(docs)-1].toDoc()}}
		after := (&scanner{}).patchFile(&f)
		if f.Docs[1].Skip != "" {
			return // refused: listed for a person, the file untouched
		}
		if after == nil {
			t.Fatal("a converted document was neither rewritten nor refused")
		}
		head, tail := file[:d.Start], file[d.End:]
		if !bytes.HasPrefix(after, head) || !bytes.HasSuffix(after, tail) || len(after) < len(head)+len(tail) {
			t.Fatalf("bytes outside the document changed:\n%s", after)
		}
		got := after[len(head) : len(after)-len(tail)]
		if err := readsAs(withFinalNewline(got), want); err != nil {
			t.Fatalf("the rewritten document does not read as the conversion (%v):\n%s\nwant %s", err, got, want)
		}
	})
}

func withFinalNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return append(append([]byte(nil), b...), '\n')
	}
	return b
}

// copyTree copies a node tree as convert does: aliases become copies of what they name.
func copyTree(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return copyTree(n.Alias)
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = copyTree(ch)
	}
	return &c
}

// mutate changes the at-th mapping of the tree (in document order) as op says.
func mutate(root *yaml.Node, op uint8, at int) {
	var maps []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			maps = append(maps, n)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	m := maps[at%len(maps)]
	if len(m.Content) < 2 {
		m.Content = append(m.Content, fstr("added"), fstr("1"))
		return
	}
	i := 2 * (at % (len(m.Content) / 2))
	switch op % 6 {
	case 0: // rename
		m.Content[i].Value += "Renamed"
	case 1: // remove
		m.Content = append(m.Content[:i], m.Content[i+2:]...)
	case 2: // add after
		add := []*yaml.Node{fstr("added"), {Kind: yaml.MappingNode, Content: []*yaml.Node{fstr("x"), {Kind: yaml.SequenceNode, Content: []*yaml.Node{fstr("1"), fstr("a b")}}}}}
		m.Content = append(m.Content[:i+2], append(add, m.Content[i+2:]...)...)
	case 3: // change a scalar
		if v := m.Content[i+1]; v.Kind == yaml.ScalarNode {
			v.Value, v.Tag = v.Value+"-changed", "!!str"
		}
	case 4: // reshape: the value moves under a new key
		m.Content[i+1] = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{fstr("inner"), m.Content[i+1]}}
	case 5: // add first
		m.Content = append([]*yaml.Node{fstr("first"), fstr("true")}, m.Content...)
	}
}

func fstr(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
