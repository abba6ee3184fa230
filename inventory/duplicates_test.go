package inventory_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// A name given twice in one object is refused at any depth, however the second copy is
// spelt, and the refusal names the JSON pointer of the duplicate: encoding/json would keep
// the last copy, so eval judged rows a reader of the first never saw.
func TestANameGivenTwiceAnywhereIsRefusedWithItsPointer(t *testing.T) {
	data, err := json.Marshal(inventory.FullDocument())
	if err != nil {
		t.Fatal(err)
	}
	root := decodeTree(t, data)
	var paths [][]string
	treePaths(root, nil, &paths)
	spellings := map[string]func(name string) string{
		"as written":             func(name string) string { return name },
		"with its first escaped": escapedFirst,
		"with every one escaped": escapedAll,
		"with a solidus escaped": func(name string) string { return rawName + strings.Replace(quoted(name), "/", `\/`, 1) },
	}
	checked := 0
	for _, p := range paths {
		obj, ok := valueAt(root, p).(map[string]any)
		if !ok {
			continue
		}
		for name, value := range obj {
			for how, spell := range spellings {
				ptr := pointer(append(p[:len(p):len(p)], name))
				doc := encodeTree(editing(p, duplicating(spell(name), value))(root))
				t.Run(fmt.Sprintf("%s %s", ptr, how), func(t *testing.T) {
					_, err := inventory.Parse(doc)
					want := ptr + ": name given twice in one object"
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("Parse = %v, want a refusal naming %q", err, want)
					}
					if inventory.AcceptFast(doc) {
						t.Fatalf("the fast acceptor accepts a name given twice")
					}
					inventory.CheckSlowPathAgreement(t, doc)
				})
				checked++
			}
		}
	}
	if checked < 400 {
		t.Fatalf("only %d duplicates checked: the walk missed the document", checked)
	}
}

func quoted(name string) string {
	b, _ := json.Marshal(name)
	return string(b)
}

// escapedFirst spells name with its first character as a \u escape.
func escapedFirst(name string) string {
	r := []rune(name)
	if len(r) == 0 || r[0] > 0xFFFF {
		return rawName + quoted(name)
	}
	rest := quoted(string(r[1:]))
	return rawName + fmt.Sprintf(`"\u%04x`, r[0]) + rest[1:]
}

// escapedAll spells every character of name as a \u escape, surrogate pairs beyond the BMP.
func escapedAll(name string) string {
	var b strings.Builder
	b.WriteString(rawName + `"`)
	for _, r := range name {
		if r > 0xFFFF {
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	b.WriteString(`"`)
	return b.String()
}

// pointer is the JSON pointer of path's parts (RFC 6901).
func pointer(path []string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, p := range path {
		b.WriteString("/" + esc.Replace(p))
	}
	return b.String()
}
