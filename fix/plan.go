// Package fix turns manifests at APIs the target does not serve into the versions that replace
// them (upgradescope fix): it reads the files as kubectl does, converts each such object with
// package convert, and rewrites only the converted objects' lines, or lists what needs a person.
package fix

import (
	"errors"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/kb"
)

// Options say what to fix and against which target.
type Options struct {
	KB *kb.KB
	// Target is the minor the objects must be served by ("1.37").
	Target string
	// MaxBytes bounds the bytes read in all (0: the files collector's default).
	MaxBytes int64
}

// Plan is what fixing a directory would do: every file read, with its documents.
type Plan struct {
	// Root is the path given; File paths are relative to it (or its base name for a file).
	Root  string
	Files []File
}

// File is one file read.
type File struct {
	Path string
	// Before is the file as read; After what it becomes, nil when nothing in it changes.
	Before, After []byte
	Docs          []Doc
}

// Doc is one document of a file, in order.
type Doc struct {
	// Line is the document's first line in the file (1-based).
	Line int
	// Object is the document as parsed (nil for a template, a comment-only or invalid
	// document); Outcome what convert did with it (zero when its API is served).
	Object  *yaml.Node
	Outcome convert.Outcome
	// Skip says why the document was not converted although its API is not served (a Helm
	// template, an object produced by Argo CD or Flux, invalid YAML); "" otherwise.
	Skip string
}

// ErrNotImplemented is returned until Scan exists.
var ErrNotImplemented = errors.New("fix: not implemented yet")

// Scan reads root (a directory, walked, or one file) and plans the fix.
func Scan(root string, opts Options) (*Plan, error) { return nil, ErrNotImplemented }
