package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// download fetches modules (path@version) with go mod download, the Go toolchain's own
// client of the module proxy (GOPROXY, checked against GOSUMDB), and returns each one's
// extracted folder in the module cache. It runs outside any module, so the project's go.mod
// is never touched.
func download(ctx context.Context, modules []string) (map[string]string, error) {
	tmp, err := os.MkdirTemp("", "genfeatures-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", append([]string{"mod", "download", "-json"}, modules...)...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	dirs := map[string]string{}
	var failed []error
	dec := json.NewDecoder(&stdout)
	for {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("read go mod download's output: %w", err)
		}
		if m.Error != "" {
			failed = append(failed, errors.New(m.Error))
			continue
		}
		dirs[m.Path+"@"+m.Version] = m.Dir
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("download Kubernetes source: %w", errors.Join(failed...))
	}
	if runErr != nil {
		return nil, fmt.Errorf("go mod download: %w: %s", runErr, bytes.TrimSpace(stderr.Bytes()))
	}
	for _, m := range modules {
		if dirs[m] == "" {
			return nil, fmt.Errorf("go mod download did not report %s", m)
		}
	}
	return dirs, nil
}
