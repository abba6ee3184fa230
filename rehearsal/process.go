package rehearsal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is etcd or kube-apiserver, running until stop.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited and been waited for
	err  error         // what Wait returned, read after done
}

const (
	// logCap bounds a process's log file: it starts over when full, keeping the latest output.
	logCap = 8 << 20
	// stopGrace is how long a process has to exit after SIGTERM before it is killed.
	stopGrace = 5 * time.Second
)

// startProcess starts path with args, its stdout and stderr in logPath (never the user's
// terminal), in a process group of its own: a ctrl-C in the terminal reaches upgradescope
// alone, which then stops the API server before etcd.
func startProcess(path string, args []string, logPath string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	out := &cappedFile{f: f}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, err
	}
	p := &process{name: filepath.Base(path), cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls url until it answers 200 with a body holding want. It fails, with the end
// of the process's log, when the process exits first or startTimeout passes, and with ctx's
// error when ctx ends.
func (p *process) waitReady(ctx context.Context, client *http.Client, url, want string) error {
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		last := probe(ctx, client, url, want)
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.failed(fmt.Sprintf("exited before it was ready (%v)", p.err))
		case <-deadline.C:
			return p.failed(fmt.Sprintf("was not ready within %s (%v)", startTimeout, last))
		case <-ctx.Done():
			return fmt.Errorf("start %s: %w", p.name, ctx.Err())
		case <-tick.C:
		}
	}
}

func probe(ctx context.Context, client *http.Client, url, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(want)) {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// failed is the error of a process that did not come up, ending with its log's last lines;
// it wraps errPortTaken when the process could not bind its port.
func (p *process) failed(what string) error {
	tail := p.tail(20)
	err := fmt.Errorf("%s %s; the end of its log:\n%s", p.name, what, tail)
	if portTaken(tail) {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// tail returns the last n lines of the process's log, read from its last 8 KiB.
func (p *process) tail(n int) string {
	f, err := os.Open(p.log)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const most = 8 << 10
	if info, err := f.Stat(); err == nil && info.Size() > most {
		_, _ = f.Seek(-most, io.SeekEnd)
	}
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stop sends the process group SIGTERM, then SIGKILL after stopGrace, and waits for the
// process to exit.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(stopGrace):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// cappedFile is a log file that starts over when it would grow past logCap. Its writes never
// fail, so a full disk does not kill the process writing.
type cappedFile struct {
	f *os.File
	n int64
}

func (c *cappedFile) Write(b []byte) (int, error) {
	if c.n+int64(len(b)) > logCap {
		if c.f.Truncate(0) == nil {
			_, _ = c.f.Seek(0, io.SeekStart)
			c.n = 0
		}
	}
	n, _ := c.f.Write(b[max(0, len(b)-logCap):])
	c.n += int64(n)
	return len(b), nil
}
