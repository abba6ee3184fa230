package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to create and drop the fresh database
)

// Tokens of the child: the shared ingest token pushes as any cluster.
const (
	ingestToken = "loadserve-ingest-token"
	readToken   = "loadserve-read-token"
)

// freshDB is where the child's store lives and how to remove it.
type freshDB struct {
	kind    string // "SQLite" or "PostgreSQL"
	dsn     string // a SQLite path or a postgres:// URL: store.Open takes either
	cleanup func(keep bool)
}

// freshStore makes an empty store: a SQLite file in a new temporary directory, or a new
// database on the -db-url server (never an existing one, so nothing is truncated).
func freshStore(o options) (*freshDB, error) {
	if o.dbURL == "" {
		dir, err := os.MkdirTemp("", "loadserve-")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, "upgradescope.db")
		return &freshDB{kind: "SQLite", dsn: path, cleanup: func(keep bool) {
			if keep {
				fmt.Fprintln(os.Stderr, "kept", path)
				return
			}
			os.RemoveAll(dir)
		}}, nil
	}
	return freshPostgres(o.dbURL)
}

func freshPostgres(admin string) (*freshDB, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return nil, fmt.Errorf("-db-url: %w", err)
	}
	name := fmt.Sprintf("loadserve_%d_%d", os.Getpid(), time.Now().Unix())
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(`CREATE DATABASE ` + name); err != nil {
		db.Close()
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	return &freshDB{kind: "PostgreSQL", dsn: u.String(), cleanup: func(keep bool) {
		defer db.Close()
		if keep {
			fmt.Fprintln(os.Stderr, "kept database", name)
			return
		}
		if _, err := db.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`); err != nil {
			fmt.Fprintln(os.Stderr, "loadserve: drop database:", err)
		}
	}}, nil
}

// serveChild is the running `upgradescope serve`.
type serveChild struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	peak   atomic.Int64
	stopCh chan struct{}
	done   sync.WaitGroup
	logs   *tailBuffer
}

// startServe starts serve on a free loopback port and waits for its "listening on" line.
func startServe(o options, db *freshDB) (*serveChild, error) {
	args := []string{"serve", "--listen", "127.0.0.1:0", "--ingest-token", ingestToken, "--read-token", readToken,
		"--target", o.targets, "--log-level", "warn"}
	if db.kind == "SQLite" {
		args = append(args, "--db", db.dsn)
	} else {
		args = append(args, "--db-url", db.dsn)
	}
	cmd := exec.Command(o.bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.bin, err)
	}
	c := &serveChild{cmd: cmd, stopCh: make(chan struct{}), logs: &tailBuffer{}}
	base, err := c.waitListening(stderr)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("serve did not start: %v\n%s", err, c.logs)
	}
	c.base = base
	c.done.Add(1)
	go c.sample()
	return c, nil
}

// waitListening reads stderr up to "listening on URL", then keeps the rest as a tail, so
// a failing run can show serve's last words.
func (c *serveChild) waitListening(stderr io.Reader) (string, error) {
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		line := lines.Text()
		c.logs.add(line)
		if u, ok := strings.CutPrefix(line, "listening on "); ok {
			go func() {
				for lines.Scan() {
					c.logs.add(lines.Text())
				}
			}()
			return strings.TrimSpace(u), nil
		}
	}
	return "", fmt.Errorf("serve exited before listening")
}

// sample reads VmHWM every 50 ms: the kernel's peak resident set, a figure the child's
// rusage at exit confirms.
func (c *serveChild) sample() {
	defer c.done.Done()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if kib := c.hwm(); kib > c.peak.Load() {
			c.peak.Store(kib)
		}
		select {
		case <-c.stopCh:
			return
		case <-tick.C:
		}
	}
}

// hwm is the child's VmHWM in KiB, 0 when unreadable.
func (c *serveChild) hwm() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib
		}
	}
	return 0
}

// childUsage is what the kernel says of the child at exit.
type childUsage struct {
	sampledHWM int64 // KiB
	maxRSS     int64 // KiB, rusage
	cpu        time.Duration
}

// stop sends SIGTERM (serve drains and exits 0) and reads the child's rusage.
func (c *serveChild) stop() (childUsage, error) {
	if kib := c.hwm(); kib > c.peak.Load() {
		c.peak.Store(kib)
	}
	close(c.stopCh)
	c.done.Wait()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = c.cmd.Process.Kill()
	}()
	err := c.cmd.Wait()
	ru, _ := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	u := childUsage{sampledHWM: c.peak.Load()}
	if ru != nil {
		u.maxRSS, u.cpu = ru.Maxrss, time.Duration(ru.Utime.Nano()+ru.Stime.Nano())
	}
	if err != nil {
		return u, fmt.Errorf("serve exited with %v\n%s", err, c.logs)
	}
	return u, nil
}

// tailBuffer keeps serve's last 40 stderr lines.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 40 {
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
