// Command bench measures `upgradescope scan --files` on generated corpora: wall time, CPU
// time and peak RSS per size, as `make bench` runs it. Results go to stdout as Markdown.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/upgradescope/upgradescope/hack/corpus"
)

func main() {
	bin := flag.String("bin", "bin/upgradescope", "the binary to measure")
	dir := flag.String("dir", "hack/.bench", "where corpora are generated (reused when present)")
	sizes := flag.String("sizes", "2000,20000,100000", "corpus sizes in objects")
	runs := flag.Int("runs", 3, "runs per size; the median wall time is reported")
	flag.Parse()
	if err := run(*bin, *dir, *sizes, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

func run(bin, dir, sizes string, runs int) error {
	fmt.Println("| objects | files | corpus MiB | wall (median) | CPU (user+sys) | peak RSS |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		corpusDir := filepath.Join(dir, fmt.Sprintf("corpus-%d", n))
		if _, err := os.Stat(corpusDir); err != nil {
			if err := corpus.Write(corpusDir, n); err != nil {
				return err
			}
		}
		var samples []sample
		for range runs {
			smp, err := measure(bin, corpusDir)
			if err != nil {
				return err
			}
			samples = append(samples, smp)
		}
		med := median(samples)
		mib, files := size(corpusDir)
		fmt.Printf("| %d | %d | %.0f | %.2f s | %.2f s | %d MiB |\n", n, files, mib, med.wall.Seconds(), med.cpu.Seconds(), med.rssKiB/1024)
	}
	return nil
}

func measure(bin, corpusDir string) (sample, error) {
	cmd := exec.Command(bin, "scan", "--files", corpusDir, "--target", "1.37", "--fail-on", "never", "-o", "json")
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s: %w", cmd, err)
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall: wall, cpu: cpu, rssKiB: ru.Maxrss}, nil
}

func median(s []sample) sample {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j].wall < s[i].wall {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
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
