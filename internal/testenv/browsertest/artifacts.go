package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

const (
	// EnvArtifacts names the directory screenshots are kept in, one folder per test; by
	// default DefaultArtifacts, which outlives the test so a person or CI can look.
	EnvArtifacts = "UPGRADESCOPE_ARTIFACTS"
	// EnvScreenshots names a directory Publish also writes its screenshots to, under stable
	// names: docs/dashboard for the documentation's pictures. Unset, Publish only keeps the
	// artifact.
	EnvScreenshots = "UPGRADESCOPE_SCREENSHOTS_DIR"
	// DefaultArtifacts is where screenshots go without EnvArtifacts.
	DefaultArtifacts = "/tmp/upgradescope-artifacts/dashboard"
)

// artifacts numbers a test's screenshots in the order they were taken.
type artifacts struct {
	dir string
	mu  sync.Mutex
	n   int
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// newArtifacts empties the test's folder (a previous run's pictures would mislead) and says
// where it is.
func newArtifacts(t testing.TB) *artifacts {
	t.Helper()
	root := os.Getenv(EnvArtifacts)
	if root == "" {
		root = DefaultArtifacts
	}
	dir := filepath.Join(root, unsafeName.ReplaceAllString(t.Name(), "_"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("clear the screenshots of a previous run: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot directory: %v", err)
	}
	t.Logf("screenshots: %s", dir)
	return &artifacts{dir: dir}
}

func (a *artifacts) save(t testing.TB, prefix, step string, png []byte) string {
	t.Helper()
	a.mu.Lock()
	a.n++
	name := fmt.Sprintf("%02d-%s-%s.png", a.n, prefix, unsafeName.ReplaceAllString(step, "-"))
	a.mu.Unlock()
	path := filepath.Join(a.dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("save screenshot: %v", err)
	}
	return path
}

// Shot saves a full-page screenshot of the tab as step, numbered in the test's folder, and
// answers its path.
func (p *Page) Shot(step string) string {
	p.t.Helper()
	png := p.screenshot(step)
	return p.b.shots.save(p.t, p.prefix, step, png)
}

// Publish saves a screenshot as Shot does and, when EnvScreenshots names a directory, also
// the screen a person sees first (the viewport, not the whole page: the documentation's
// pictures stay readable and small) as <name>-<viewport>.png there. The pictures the
// documentation shows are the tests'.
func (p *Page) Publish(name string) {
	p.t.Helper()
	p.Shot(name)
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("%s: screenshot %s: %v", p.prefix, name, err)
	}
	path := filepath.Join(dir, name+"-"+p.vp.Name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Errorf("publish screenshot: %v", err)
		return
	}
	p.t.Logf("published %s", path)
}

func (p *Page) screenshot(step string) []byte {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("%s: screenshot %s: %v", p.prefix, step, err)
	}
	return png
}
