package bundles_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// PollDir activates the directory's signed bundles at once, then each new content of a
// file: an unsigned or tampered file is refused before activation, and content it has
// already tried is not tried again.
func TestPollDirActivatesEachNewSignedContentAndRefusesOthers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	vc, err := bundles.VerificationFromFile(public, "")
	if err != nil {
		t.Fatal(err)
	}
	kb := filepath.Join(dir, "kb.tar.gz")
	bundletest.Publish(t, kb, bundletest.KB(t, private, "2027-01-05.1", "1.37"))
	if err := os.WriteFile(filepath.Join(dir, ".kb.tar.gz.tmp"), []byte("a publisher's temporary file"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	p, err := bundles.PollDir(ctx, bundles.DirOptions{Dir: dir, Verification: vc, Every: 50 * time.Millisecond,
		Activate: rec.activate, Observed: rec.observed})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	rec.mu.Lock()
	first := slices.Clone(rec.revisions)
	rec.mu.Unlock()
	if !slices.Equal(first, []string{"2027-01-05.1"}) {
		t.Fatalf("activated %v before PollDir returned, want the directory's kb", first)
	}

	bundletest.Publish(t, kb, bundletest.KB(t, "", "2027-01-06.1", "1.37"))
	rec.waitFor(t, "the unsigned kb refused", func(_, results []string) bool { return count(results, bundles.ResultDownloadFailed) == 1 })
	bundletest.Publish(t, kb, bundletest.Tamper(t, bundletest.KB(t, private, "2027-01-07.1", "1.37")))
	rec.waitFor(t, "the tampered kb refused", func(_, results []string) bool { return count(results, bundles.ResultDownloadFailed) == 2 })
	bundletest.Publish(t, kb, bundletest.KB(t, private, "2027-01-12.1", "1.37"))
	rec.waitFor(t, "the new signed kb activated", func(revs, _ []string) bool { return slices.Contains(revs, "2027-01-12.1") })
	p.Stop()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{bundles.ResultActivated, bundles.ResultDownloadFailed, bundles.ResultDownloadFailed, bundles.ResultActivated}
	if !slices.Equal(rec.revisions, []string{"2027-01-05.1", "2027-01-12.1"}) || !slices.Equal(rec.results, want) {
		t.Errorf("activated %v with results %v; want each signed revision once, each refusal once (results %v)", rec.revisions, rec.results, want)
	}
}

// PollDir refuses to run without a key: the server would evaluate with what it reads.
func TestPollDirRequiresAVerificationKey(t *testing.T) {
	_, err := bundles.PollDir(context.Background(), bundles.DirOptions{Dir: t.TempDir(), Every: time.Second,
		Activate: func(context.Context, *bundles.Fetched) error { return nil }})
	if err == nil {
		t.Fatal("PollDir without a verification key started")
	}
}

// A content whose activation failed is tried again without the file changing: the failure
// may pass (a rehearsal out of time on a busy server), unlike a signature that does not
// verify.
func TestPollDirTriesAFailedActivationAgain(t *testing.T) {
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	vc, err := bundles.VerificationFromFile(public, "")
	if err != nil {
		t.Fatal(err)
	}
	bundletest.Publish(t, filepath.Join(dir, "kb.tar.gz"), bundletest.KB(t, private, "2027-01-05.1", "1.37"))
	rec := newRecorder()
	rec.refuse = "2027-01-05.1"
	p, err := bundles.PollDir(context.Background(), bundles.DirOptions{Dir: dir, Verification: vc, Every: 20 * time.Millisecond,
		Activate: rec.activate, Observed: rec.observed})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	rec.waitFor(t, "the first activation failed", func(_, results []string) bool {
		return count(results, bundles.ResultActivationFailed) == 1
	})
	rec.mu.Lock()
	rec.refuse = ""
	rec.mu.Unlock()
	rec.waitFor(t, "the same content activated on a later look", func(revs, _ []string) bool {
		return slices.Equal(revs, []string{"2027-01-05.1"})
	})
}

// A FIFO among the published bundles, or a link to one, is reported once and never opened
// (issue 30, item 10): PollDir's first look, which serve takes before it listens, used to
// wait on it for good. The directory's bundles are activated around it.
func TestPollDirReportsAFIFOOnceAndNeverOpensIt(t *testing.T) {
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	vc, err := bundles.VerificationFromFile(public, "")
	if err != nil {
		t.Fatal(err)
	}
	kb := filepath.Join(dir, "kb.tar.gz")
	bundletest.Publish(t, kb, bundletest.KB(t, private, "2027-01-05.1", "1.37"))
	fifo := filepath.Join(dir, "pipe.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.tar.gz", filepath.Join(dir, "link.tar.gz")); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	var mu sync.Mutex
	var refused []string
	observed := func(src, result string, err error) {
		if err != nil && strings.Contains(err.Error(), "not a regular file") {
			mu.Lock()
			refused = append(refused, filepath.Base(src))
			mu.Unlock()
		}
		rec.observed(src, result, err)
	}
	p, err := bundles.PollDir(context.Background(), bundles.DirOptions{Dir: dir, Verification: vc, Every: 20 * time.Millisecond,
		Activate: rec.activate, Observed: observed})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	// A new revision activated means looks after the first one have passed the FIFO too.
	bundletest.Publish(t, kb, bundletest.KB(t, private, "2027-01-06.1", "1.37"))
	rec.waitFor(t, "the new kb activated", func(revs, _ []string) bool { return slices.Contains(revs, "2027-01-06.1") })
	p.Stop()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(refused)
	if want := []string{"link.tar.gz", "pipe.tar.gz"}; !slices.Equal(refused, want) {
		t.Errorf("refused %v, want each of %v once", refused, want)
	}
	// A request parked in open(2) would count as a reader, and a writer's open succeed.
	if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
		t.Error("the FIFO has a reader: PollDir opened it")
	}
}
