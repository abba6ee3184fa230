// Command auditgen writes a realistic kube-apiserver audit log (JSON lines) to standard
// output, for measuring how fast collectors/audit reads one and in how much memory:
//
//	go run ./tools/auditgen -size 2GiB -agents 1000 | upgradescope inventory --files empty/ --audit-log -
//
// The same flags give the same log (hack/corpus.AuditLog).
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/hack/corpus"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "auditgen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("auditgen", flag.ContinueOnError)
	size := fs.String("size", "64MiB", "how much to write: bytes, or with a KiB, MiB or GiB suffix")
	agents := fs.Int("agents", 1000, "how many distinct user agents make the requests")
	seed := fs.Uint64("seed", 1, "the seed: the same flags give the same log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := parseSize(*size)
	if err != nil {
		return err
	}
	s, err := corpus.AuditLog(os.Stdout, corpus.AuditOptions{Size: n, Agents: *agents, Seed: *seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "auditgen: %d bytes, %d events, %d requests, %d to deprecated APIs\n", s.Bytes, s.Events, s.Requests, s.Deprecated)
	return nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("-size %q: want a number of bytes, KiB, MiB or GiB", s)
	}
	return n * mult, nil
}
