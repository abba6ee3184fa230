package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/collectors/files"
)

// excludeFlags is --exclude, on every command that walks manifests.
type excludeFlags struct {
	globs []string
}

func (e *excludeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&e.globs, "exclude", nil,
		"leave out paths under --files matching this glob, relative to it ('*' within a segment, '**' across, trailing '/' for directories; repeatable); "+
			"patterns in "+files.IgnoreFileName+" beside "+".upgradescope.yaml apply too, and every excluded path is listed in the report")
}

// exclude parses --exclude and the .upgradescopeignore looked up where .upgradescope.yaml
// is: beside --config when one is given, else in the directory --files names (or holds) and
// then the working directory, the first found used. Patterns are relative to --files
// whichever directory held the file. A bad pattern is an error naming the flag or the
// file's line.
//
// Without --files (a live scan) there is nothing to exclude, and --exclude is refused.
func (e *excludeFlags) forFiles(filesPath, configPath string) (*files.Exclude, error) {
	if filesPath == "" {
		if len(e.globs) > 0 {
			return nil, errors.New("--exclude applies to --files: without it no files are walked")
		}
		return nil, nil
	}
	var patterns []files.Pattern
	for _, g := range e.globs {
		patterns = append(patterns, files.Pattern{Glob: g, Origin: "--exclude"})
	}
	if name, ok := discoverIgnoreFile(filesPath, configPath); ok {
		more, err := files.ReadIgnoreFile(name)
		if err != nil {
			return nil, err
		}
		patterns = append(patterns, more...)
	}
	if len(patterns) == 0 {
		return nil, nil
	}
	return files.NewExclude(patterns)
}

// discoverIgnoreFile answers the ignore file beside configPath, else in the scanned
// directory, else in the working directory.
func discoverIgnoreFile(filesPath, configPath string) (string, bool) {
	dirs := []string{configDir(filesPath), "."}
	if configPath != "" {
		dirs = []string{filepath.Dir(configPath)}
	}
	for _, d := range dirs {
		p := filepath.Join(d, files.IgnoreFileName)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}
