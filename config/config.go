// Package config reads .upgradescope.yaml: the suppression rules a team keeps beside its
// manifests. Every error names the file and line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gobwas/glob"
	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// FileName is the file Discover looks for.
const FileName = ".upgradescope.yaml"

// maxConfigBytes bounds the file; a suppression list is short.
const maxConfigBytes = 1 << 20

var (
	categoryRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	ruleFields = map[string]bool{"key": true, "category": true, "namespace": true, "name": true, "file": true, "reason": true, "expires": true}
)

// Config is a parsed file.
type Config struct {
	Path   string
	Ignore []report.IgnoreRule
}

// Discover returns the config file in dir, if there is one.
func Discover(dir string) (string, bool) {
	p := filepath.Join(dir, FileName)
	if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
		return p, true
	}
	return "", false
}

// Load reads and validates a config file. Only a regular file is read, and never more than
// 1 MiB of it: a FIFO, a device or a huge file is refused before it is read.
func Load(path string) (*Config, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	rules, err := parse(data)
	var le *lineError
	if errors.As(err, &le) {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Config{Path: path, Ignore: rules}, nil
}

// Parse validates a config given as bytes (a gate request's ?config=), naming it name in
// errors as Load names its file.
func Parse(name string, data []byte) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxConfigBytes)
	}
	rules, err := parse(data)
	var le *lineError
	if errors.As(err, &le) {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Config{Path: name, Ignore: rules}, nil
}

func readBounded(path string) ([]byte, error) {
	// Stat first: opening a FIFO would wait for a writer.
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than 1 MiB", path)
	}
	return data, nil
}

// lineError carries the line a problem is on; it prints as "LINE: message" after the path.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("%d: %s", e.line, e.msg) }

func errAt(n *yaml.Node, format string, args ...any) error {
	return &lineError{line: n.Line, msg: fmt.Sprintf(format, args...)}
}

func parse(data []byte) ([]report.IgnoreRule, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, parseError(data, err)
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, errAt(top, "expected a mapping with an ignore: list")
	}
	var rules []report.IgnoreRule
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "ignore" {
			return nil, errAt(k, "unknown key %q (the only key is ignore)", k.Value)
		}
		if i > 0 {
			return nil, errAt(k, "ignore is given twice; the second list would silently replace the first")
		}
		if v.Kind != yaml.SequenceNode {
			return nil, errAt(v, "ignore must be a list of rules")
		}
		for _, item := range v.Content {
			r, err := parseRule(item)
			if err != nil {
				return nil, err
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}

// parseError keeps the parser's message, which names the line, and adds the last line when
// it does not: the parser reports an unexpected end of the file without one.
func parseError(data []byte, err error) error {
	if strings.Contains(err.Error(), "line ") {
		return err
	}
	return &lineError{line: bytes.Count(data, []byte("\n")) + 1, msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

func parseRule(n *yaml.Node) (report.IgnoreRule, error) {
	r := report.IgnoreRule{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return r, errAt(n, "an ignore rule must be a mapping")
	}
	fields := map[string]*string{
		"key": &r.Key, "category": &r.Category, "namespace": &r.Namespace, "name": &r.Name,
		"file": &r.File, "reason": &r.Reason, "expires": &r.Expires,
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !ruleFields[k.Value] {
			return r, errAt(k, "unknown field %q in ignore rule", k.Value)
		}
		if seen[k.Value] {
			return r, errAt(k, "%s is given twice in one ignore rule", k.Value)
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode {
			return r, errAt(v, "%s must be a string", k.Value)
		}
		*fields[k.Value] = v.Value
	}
	return r, validate(n, r)
}

func validate(n *yaml.Node, r report.IgnoreRule) error {
	if err := CheckRule(r); err != nil {
		return errAt(n, "%s", err)
	}
	return nil
}

// CheckRule says what is wrong with an ignore rule, wherever it came from (this file or a
// ClusterReadiness spec.ignore).
func CheckRule(r report.IgnoreRule) error {
	switch {
	case strings.TrimSpace(r.Reason) == "":
		return fmt.Errorf("ignore rule needs a reason")
	case !inventory.HasReason(r.Reason):
		return fmt.Errorf("ignore rule needs a reason: the one given holds no letter or digit")
	case (r.Key == "") == (r.Category == ""):
		return fmt.Errorf("ignore rule needs exactly one of key or category")
	case r.Category != "" && !categoryRE.MatchString(r.Category):
		return fmt.Errorf("category %q is not a category name", r.Category)
	case r.Key != "" && !validKey(r.Key):
		return fmt.Errorf("key %q does not start with a category (removed-api/…)", r.Key)
	}
	if r.Expires != "" {
		if _, err := time.Parse(time.DateOnly, r.Expires); err != nil {
			return fmt.Errorf("expires %q is not a date (YYYY-MM-DD)", r.Expires)
		}
	}
	for name, pattern := range map[string]string{"namespace": r.Namespace, "name": r.Name, "file": r.File} {
		if pattern == "" {
			continue
		}
		if _, err := glob.Compile(pattern, '/'); err != nil {
			return fmt.Errorf("%s glob %q: %v", name, pattern, err)
		}
	}
	return nil
}

func validKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return categoryRE.MatchString(key[:i]) && i+1 < len(key)
		}
	}
	return categoryRE.MatchString(key)
}
