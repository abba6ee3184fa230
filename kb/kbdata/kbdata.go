// Package kbdata writes the knowledge base's data files the way the drift checks (make
// kb-check, make registry-check) compare them: indented JSON with a final newline.
package kbdata

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Write writes v to path as a bundle data file, creating its directory.
func Write(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
