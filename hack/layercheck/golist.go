package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// pkg is the part of `go list -json` the checks read.
type pkg struct {
	ImportPath   string
	Dir          string
	Name         string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	DepOnly      bool
	Standard     bool
	Error        *struct{ Err string }
}

// module is the module under check: its path, its own packages (those ./... matches) and
// every package any of them depends on, by import path.
type module struct {
	dir  string
	path string
	own  []*pkg
	all  map[string]*pkg
}

// loadModule runs `go list -deps` on dir's ./... .
func loadModule(ctx context.Context, dir string) (*module, error) {
	dir, err := filepath.Abs(dir) // go list answers absolute paths, reported relative to dir
	if err != nil {
		return nil, err
	}
	path, err := goCmd(ctx, dir, "list", "-m")
	if err != nil {
		return nil, fmt.Errorf("read the module path: %w", err)
	}
	out, err := goCmd(ctx, dir, "list", "-e", "-deps", "-json", "./...")
	if err != nil {
		return nil, fmt.Errorf("list the packages: %w", err)
	}
	m := &module{dir: dir, path: strings.TrimSpace(path), all: map[string]*pkg{}}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		if p.Error != nil && !p.DepOnly {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		m.all[p.ImportPath] = p
		if !p.DepOnly {
			m.own = append(m.own, p)
		}
	}
	sort.Slice(m.own, func(i, j int) bool { return m.own[i].ImportPath < m.own[j].ImportPath })
	return m, nil
}

// rel answers a module package's path relative to the module ("" for its root).
func (m *module) rel(importPath string) string {
	if importPath == m.path {
		return ""
	}
	return strings.TrimPrefix(importPath, m.path+"/")
}

// abs answers the import path of rel, a path relative to the module.
func (m *module) abs(rel string) string {
	if rel == "" {
		return m.path
	}
	return m.path + "/" + rel
}

// goCmd runs the go command in dir, answering its stdout or its stderr as the error.
func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
