package rehearsal

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

func TestAStartedServerLeavesNoProcessAndNoDirectoryBehind(t *testing.T) {
	bin := kubetest.Binaries(t)
	tests := []struct {
		name string
		end  func(t *testing.T, s *Server, cancel context.CancelFunc)
	}{
		{"when it is closed", func(t *testing.T, s *Server, _ context.CancelFunc) {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"when its context ends (ctrl-C)", func(_ *testing.T, _ *Server, cancel context.CancelFunc) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			t0 := time.Now()
			s, err := Start(ctx, bin)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			t.Logf("started in %s", time.Since(t0).Round(time.Millisecond))
			pids := []int{s.plane.etcd.cmd.Process.Pid, s.plane.apiserver.cmd.Process.Pid}
			dir := s.plane.dir
			if left := running(pids); len(left) != 2 {
				t.Fatalf("etcd and kube-apiserver %v: running %v, want both", pids, left)
			}
			t0 = time.Now()
			tt.end(t, s, cancel)
			waitGone(t, pids, dir)
			t.Logf("stopped in %s", time.Since(t0).Round(time.Millisecond))
		})
	}
}

func TestAStartCancelledBeforeTheServerIsReadyLeavesNothingBehind(t *testing.T) {
	bin := kubetest.Binaries(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where os.MkdirTemp puts the server's directory
	before := children(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Start(ctx, bin); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start within 500ms = %v, want the context's deadline", err)
	}
	var left []int
	for pid := range children(t) {
		if !before[pid] {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		t.Errorf("processes %v started by Start are still running", left)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("%s holds %v after Start failed, want nothing", tmp, entries)
	}
}

// waitGone fails unless every pid has exited and dir is gone within stopGrace and a margin.
func waitGone(t *testing.T, pids []int, dir string) {
	t.Helper()
	deadline := time.Now().Add(stopGrace + 10*time.Second)
	for time.Now().Before(deadline) {
		_, err := os.Stat(dir)
		if len(running(pids)) == 0 && errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err := os.Stat(dir)
	t.Errorf("after the server's end: running %v of %v; stat %s: %v, want no process and no directory", running(pids), pids, dir, err)
}

// running returns the pids that still exist (waited-for children do not).
func running(pids []int) []int {
	var alive []int
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			alive = append(alive, pid)
		}
	}
	return alive
}

// children returns the etcd and kube-apiserver processes whose parent is this test, from /proc.
func children(t *testing.T) map[int]bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to list child processes: %v", err)
	}
	kids := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		comm, rest := s[open+1:end], strings.Fields(s[end+1:])
		if (comm == "etcd" || comm == "kube-apiserver") && len(rest) > 1 && rest[1] == strconv.Itoa(os.Getpid()) {
			kids[pid] = true
		}
	}
	return kids
}

func TestAnAPIServerThatDoesNotComeUpIsReportedWithTheEndOfItsLog(t *testing.T) {
	bin := kubetest.Binaries(t)
	dir := t.TempDir()
	if err := os.Symlink(bin+"/etcd", dir+"/etcd"); err != nil {
		t.Fatal(err)
	}
	// a kube-apiserver that refuses its flags, as one of another release might
	script := "#!/bin/sh\necho 'Error: unknown flag: --endpoint-reconciler-type' >&2\nexit 1\n"
	if err := os.WriteFile(dir+"/kube-apiserver", []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := Start(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver exited before it was ready") ||
		!strings.Contains(err.Error(), "unknown flag: --endpoint-reconciler-type") {
		t.Fatalf("Start = %v, want kube-apiserver's exit and the end of its log", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("%s holds %v after Start failed, want nothing", tmp, entries)
	}
}
