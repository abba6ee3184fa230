package browsertest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// Downloads makes the browser save what its tabs download into a directory of the test's,
// under the names the pages give, and answers it. Headless Chromium otherwise drops a
// download, so a test of a download link could only trust the page's word that it worked.
func (b *Browser) Downloads() string {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	params := browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, params); err != nil {
		b.t.Fatalf("let the browser save downloads in %s: %v", dir, err)
	}
	return dir
}

// Downloaded waits for the file name to arrive in dir (Downloads) and answers its bytes.
// Chromium writes a download under another name and renames it when it is complete, so the
// file's presence means it is whole.
func (b *Browser) Downloaded(dir, name string) []byte {
	b.t.Helper()
	path := filepath.Join(dir, name)
	for deadline := time.Now().Add(timeout); ; time.Sleep(pollEvery) {
		data, err := os.ReadFile(path)
		if err == nil {
			return data
		}
		if !errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			b.t.Fatalf("the download %s did not arrive in %s within %s (it holds %v): %v", name, dir, timeout, names, err)
		}
	}
}
