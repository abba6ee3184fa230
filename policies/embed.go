// Package policies embeds the two built-in bundles: rules (the Rego packs, the report and
// their library) and kb (the knowledge base: API lifecycle, add-on registry, skew policy).
// Each is an ordinary OPA bundle directory with its own .manifest and revision, so a
// knowledge update ships without a rule change; stock `opa test policies/rules policies/kb`
// and `opa check --strict` accept them.
package policies

import (
	"embed"
	"encoding/json"
	"io/fs"
)

//go:embed rules/.manifest rules/upgradescope kb/.manifest kb/upgradescope
var all embed.FS

// Rules is the rules bundle: roots upgradescope/rules, upgradescope/report, upgradescope/lib.
var Rules = sub("rules")

// KB is the knowledge-base bundle: root upgradescope/kb.
var KB = sub("kb")

// Builtin names the built-in bundles in load order.
var Builtin = []struct {
	Name string
	FS   fs.FS
}{{"rules", Rules}, {"kb", KB}}

func sub(dir string) fs.FS {
	fsys, err := fs.Sub(all, dir)
	if err != nil {
		panic(err) // the directory is embedded above; this cannot fail at run time
	}
	return fsys
}

// Revision reads the revision a built-in bundle's .manifest declares ("" when unreadable).
func Revision(fsys fs.FS) string {
	raw, err := fs.ReadFile(fsys, ".manifest")
	if err != nil {
		return ""
	}
	var m struct {
		Revision string `json:"revision"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Revision
}

// RulesRevision and KBRevision are the embedded bundles' revisions.
var (
	RulesRevision = Revision(Rules)
	KBRevision    = Revision(KB)
)
