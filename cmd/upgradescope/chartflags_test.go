package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestChartFlagsWithoutAdviseChartsAreRefusedNamingTheFlag(t *testing.T) {
	t.Setenv("UPGRADESCOPE_SERVER_TOKEN", "")
	dir := t.TempDir()
	nowhere := filepath.Join(dir, "missing-kubeconfig")
	flags := [][]string{
		{"--chart-offline"},
		{"--chart-repo-cache", filepath.Join(dir, "cache")},
		{"--chart-repository", "web=https://charts.example.com"},
		{"--helm-repository-config", filepath.Join(dir, "repositories.yaml")},
		{"--chart-timeout", "5s"},
	}
	commands := [][]string{
		{"scan", "--files", examples, "--target", "1.36"},
		{"inventory", "--files", examples},
		{"agent", "--kubeconfig", nowhere},
	}
	for _, cmd := range commands {
		for _, fl := range flags {
			t.Run(cmd[0]+" "+fl[0], func(t *testing.T) {
				r := runCLI(t, append(append([]string{}, cmd...), fl...)...)
				want := fl[0] + " is only used with --advise-charts"
				if r.code != exitErr || !strings.Contains(r.stderr, want) {
					t.Errorf("exit %d, stderr %q; want 1 saying %q", r.code, r.stderr, want)
				}
			})
		}
	}
}

func TestAHelmRepositoryConfigThatIsNotThereIsRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "repositories.yaml")
	r := runCLI(t, "scan", "--files", examples, "--target", "1.36", "--advise-charts", "--helm-repository-config", missing)
	if r.code != exitErr || !strings.Contains(r.stderr, "--helm-repository-config") || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("exit %d, stderr %q; want 1 naming the flag and the missing file", r.code, r.stderr)
	}
}
