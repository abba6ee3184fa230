package kb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// dataRoot is where a kb bundle's files hold the data Decode reads.
const dataRoot = "upgradescope/kb"

// LoadFS decodes the knowledge base a kb bundle's files hold, fsys being the bundle's root
// (policies.KB for the built-in one): each data.json under upgradescope/kb is placed at its
// directory's path, as a bundle loader places it, and the tree is decoded (Decode). It reads
// data only, so what needs just the tables (the chart's RBAC generator) links no policy
// engine. origin names the bundle in errors.
func LoadFS(origin string, fsys fs.FS) (*KB, error) {
	tree, err := readTree(fsys)
	if err != nil {
		return nil, fmt.Errorf("kb bundle (%s): %w", origin, err)
	}
	return Decode(origin, tree)
}

// readTree reads every data.json under dataRoot into one tree, numbers kept as
// json.Number as a bundle loader keeps them.
func readTree(fsys fs.FS) (map[string]any, error) {
	root := map[string]any{}
	err := fs.WalkDir(fsys, dataRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "data.json" {
			return err
		}
		v, err := readJSON(fsys, p)
		if err != nil {
			return err
		}
		at := strings.TrimPrefix(strings.TrimPrefix(path.Dir(p), dataRoot), "/")
		return place(root, at, v)
	})
	if err != nil {
		return nil, fmt.Errorf("read the data: %w", err)
	}
	return root, nil
}

// readJSON reads the one JSON value the file at p holds.
func readJSON(fsys fs.FS, p string) (any, error) {
	raw, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: more than one JSON value", p)
	}
	return v, nil
}

// place puts v at the slash-separated path at ("" is the root) of tree, merging objects
// that two files' paths share; any other overlap is an error, since one would hide the other.
func place(tree map[string]any, at string, v any) error {
	if at != "" {
		segs := strings.Split(at, "/")
		for i := len(segs) - 1; i >= 0; i-- {
			v = map[string]any{segs[i]: v}
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("/%s/data.json: want an object, to merge at the root", dataRoot)
	}
	return merge(tree, obj, "/"+dataRoot)
}

// merge adds src's keys to dst, merging objects both hold; at names dst in errors.
func merge(dst, src map[string]any, at string) error {
	for k, v := range src {
		old, exists := dst[k]
		if !exists {
			dst[k] = v
			continue
		}
		oldObj, ok1 := old.(map[string]any)
		newObj, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s: two data files set it", path.Join(at, k))
		}
		if err := merge(oldObj, newObj, path.Join(at, k)); err != nil {
			return err
		}
	}
	return nil
}
