// Command bench measures `upgradescope scan --files` on generated corpora: wall time, CPU
// time and peak RSS per corpus shape and size, as `make bench` runs it. Peers (another
// build of ours, another tool) run interleaved with it on the same corpora, so a busy
// machine slows every tool alike. Results go to stdout as Markdown.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/hack/machine"
)

// peers collects repeated -peer flags: "name=command with {dir}" or a bare command.
type peers []tool

func (p *peers) String() string { return fmt.Sprint(*p) }

func (p *peers) Set(v string) error {
	name, command, ok := strings.Cut(v, "=")
	if !ok || strings.ContainsAny(name, " /") {
		name, command = fmt.Sprintf("peer-%d", len(*p)+1), v
	}
	args := strings.Fields(command)
	if len(args) == 0 || !strings.Contains(command, "{dir}") {
		return fmt.Errorf("peer %q: want a command line holding {dir}, where the corpus goes", v)
	}
	*p = append(*p, tool{name: name, args: args})
	return nil
}

func main() {
	bin := flag.String("bin", "bin/upgradescope", "the binary to measure")
	dir := flag.String("dir", "hack/.bench", "where corpora are generated (reused when present)")
	shapes := flag.String("shapes", "classic,many-images", "corpus shapes (hack/corpus): classic, many-images")
	sizes := flag.String("sizes", "2000,20000,100000", "corpus sizes in objects")
	runs := flag.Int("runs", 3, "runs per tool and corpus; medians are reported")
	var others peers
	flag.Var(&others, "peer", "another tool to run interleaved with ours, as `name=command`; {dir} is replaced by the corpus directory (repeatable), e.g. pluto='/tmp/pluto-bin detect-files -d {dir}'")
	flag.Parse()
	ours := tool{name: "upgradescope", args: []string{*bin, "scan", "--files", "{dir}", "--target", "1.37", "--fail-on", "never", "-o", "json"}}
	// fix reads the same files and must be no slower than the scan (issue 33): it exits 2
	// (files would change), which the table shows.
	fix := tool{name: "upgradescope fix", args: []string{*bin, "fix", "--files", "{dir}", "--target", "1.37", "-o", "json"}}
	if err := run(append(peers{ours, fix}, others...), *dir, *shapes, *sizes, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// tool is a command line to measure; {dir} is replaced by the corpus directory.
type tool struct {
	name string
	args []string
}

type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
	exit      int
}

func run(tools []tool, dir, shapes, sizes string, runs int) error {
	fmt.Printf("load average before: %s\n\n", machine.LoadAverage())
	fmt.Println("| shape | objects | files | corpus MiB | tool | wall (median) | CPU user+sys (median) | peak RSS (median) | exit |")
	fmt.Println("|---|---:|---:|---:|---|---:|---:|---:|---:|")
	for _, shapeName := range strings.Split(shapes, ",") {
		shape, err := corpus.ShapeNamed(strings.TrimSpace(shapeName))
		if err != nil {
			return err
		}
		for _, s := range strings.Split(sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return err
			}
			corpusDir, err := ensureCorpus(dir, shape, n)
			if err != nil {
				return err
			}
			if err := measureAll(tools, shape, n, corpusDir, runs); err != nil {
				return err
			}
		}
	}
	fmt.Printf("\nload average after: %s\n", machine.LoadAverage())
	return nil
}

// ensureCorpus generates a corpus once; it is written aside and renamed, so an interrupted
// generation is never reused.
func ensureCorpus(dir string, shape corpus.Shape, n int) (string, error) {
	corpusDir := filepath.Join(dir, fmt.Sprintf("%s-%d", shape.Name, n))
	if _, err := os.Stat(corpusDir); err == nil {
		return corpusDir, nil
	}
	tmp := corpusDir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := corpus.Write(tmp, n, shape); err != nil {
		return "", err
	}
	return corpusDir, os.Rename(tmp, corpusDir)
}

// measureAll runs every tool once per round, so the tools take turns on the machine.
func measureAll(tools []tool, shape corpus.Shape, n int, corpusDir string, runs int) error {
	samples := make([][]sample, len(tools))
	for range runs {
		for i, t := range tools {
			smp, err := measure(t, corpusDir)
			if err != nil {
				return err
			}
			samples[i] = append(samples[i], smp)
		}
	}
	mib, files := size(corpusDir)
	for i, t := range tools {
		m := median(samples[i])
		fmt.Printf("| %s | %d | %d | %.0f | %s | %.2f s | %.2f s | %d MiB | %d |\n",
			shape.Name, n, files, mib, t.name, m.wall.Seconds(), m.cpu.Seconds(), m.rssKiB/1024, m.exit)
	}
	return nil
}

// measure runs t once. A non-zero exit is reported, not fatal: pluto exits 3 when it finds
// removed APIs. A tool that cannot start or dies of a signal fails the run.
func measure(t tool, corpusDir string) (sample, error) {
	args := make([]string, len(t.args))
	for i, a := range t.args {
		args[i] = strings.ReplaceAll(a, "{dir}", corpusDir)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if err != nil && (!errors.As(err, &exitErr) || exitErr.ExitCode() < 0) {
		return sample{}, fmt.Errorf("%s: %w", cmd, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{
		wall:   wall,
		cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		rssKiB: ru.Maxrss,
		exit:   cmd.ProcessState.ExitCode(),
	}, nil
}

// median takes the median of each measure on its own.
func median(s []sample) sample {
	pick := func(get func(sample) int64) int64 {
		v := make([]int64, len(s))
		for i := range s {
			v[i] = get(s[i])
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return sample{
		wall:   time.Duration(pick(func(x sample) int64 { return int64(x.wall) })),
		cpu:    time.Duration(pick(func(x sample) int64 { return int64(x.cpu) })),
		rssKiB: pick(func(x sample) int64 { return x.rssKiB }),
		exit:   s[len(s)-1].exit,
	}
}

func size(dir string) (mib float64, files int) {
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				mib += float64(info.Size()) / (1 << 20)
				files++
			}
		}
		return nil
	})
	return mib, files
}
