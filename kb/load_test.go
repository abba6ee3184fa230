package kb_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/upgradescope/upgradescope/kb"
)

// Each data.json lands at its directory's path below upgradescope/kb, numbers kept as
// json.Number, objects two files share merged; files elsewhere are not data.
func TestTheDataFilesAreReadIntoOneTreeByDirectory(t *testing.T) {
	fsys := fstest.MapFS{
		"upgradescope/kb/data.json":           {Data: []byte(`{"top": {"a": 1}}`)},
		"upgradescope/kb/top/b/data.json":     {Data: []byte(`{"c": 2.5}`)},
		"upgradescope/kb/meta/data.json":      {Data: []byte(`{"horizon": "1.35"}`)},
		"upgradescope/kb/meta/notes.txt":      {Data: []byte(`not data`)},
		"upgradescope/rules/other/data.json":  {Data: []byte(`{"x": 1}`)},
		"upgradescope/kb/groups/data.json":    {Data: []byte(`{"": true, "apps": true}`)},
		"upgradescope/kb/list/deep/data.json": {Data: []byte(`[1, "two"]`)},
	}
	got, err := kb.ReadTree(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"top":    map[string]any{"a": json.Number("1"), "b": map[string]any{"c": json.Number("2.5")}},
		"meta":   map[string]any{"horizon": "1.35"},
		"groups": map[string]any{"": true, "apps": true},
		"list":   map[string]any{"deep": []any{json.Number("1"), "two"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tree:\n%#v\nwant:\n%#v", got, want)
	}
}

// A data file that is not one JSON value, or that two files both set, is refused naming the
// bundle and the file or pointer, not read in part.
func TestBrokenDataFilesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		says  string
	}{
		{"not JSON", map[string]string{"upgradescope/kb/meta/data.json": `{"horizon": `},
			"kb bundle (kb.tar.gz): read the data: upgradescope/kb/meta/data.json: unexpected EOF"},
		{"two values", map[string]string{"upgradescope/kb/meta/data.json": `{} {}`},
			"kb bundle (kb.tar.gz): read the data: upgradescope/kb/meta/data.json: more than one JSON value"},
		{"a value set twice", map[string]string{"upgradescope/kb/data.json": `{"meta": {"horizon": "1.34"}}`, "upgradescope/kb/meta/horizon/data.json": `"1.35"`},
			"kb bundle (kb.tar.gz): read the data: /upgradescope/kb/meta/horizon: two data files set it"},
		{"a root that is not an object", map[string]string{"upgradescope/kb/data.json": `[]`},
			"kb bundle (kb.tar.gz): read the data: /upgradescope/kb/data.json: want an object, to merge at the root"},
		{"no kb data", map[string]string{"upgradescope/rules/data.json": `{}`},
			"kb bundle (kb.tar.gz): read the data: open upgradescope/kb: file does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, text := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
			if _, err := kb.LoadFS("kb.tar.gz", fsys); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("LoadFS = %v, want an error saying %q", err, tc.says)
			}
		})
	}
}
