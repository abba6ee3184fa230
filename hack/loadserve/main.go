// Command loadserve measures `upgradescope serve` over HTTP: it starts the built binary as a
// child on a fresh store (a SQLite file in a temporary directory, or a fresh PostgreSQL
// database it creates with -db-url and drops at the end), then
//
//   - pushes: -agents concurrent agents push distinct snapshots of a -namespaces inventory
//     (hack/corpus.Cluster) for -duration, while -readers poll GET /api/v1/fleet;
//   - reads: -seed-clusters fills the store first (through the store package, directly:
//     30,000 evaluated pushes over HTTP would take longer than the measurement), then the
//     readers measure GET /api/v1/fleet against the real serve process;
//   - big pushes: -big N clients push a ~20 MiB (decompressed) valid envelope at once.
//
// It reports new snapshots per second, push latency percentiles, status counts, fleet GET
// latency percentiles, the child's peak RSS (VmHWM sampled from /proc, and its rusage
// maxrss at exit), its CPU time, and the load average before and after, as Markdown.
// It builds nothing: run `make build` first.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/hack/machine"
)

type options struct {
	bin          string
	dbURL        string
	agents       int
	namespaces   int
	targets      string
	duration     time.Duration
	readers      int
	readInterval time.Duration
	pool         int
	seedClusters int
	seedHistory  int
	seedTargets  int
	big          int
	bigBytes     int
	keep         bool
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/upgradescope", "the upgradescope binary to start as serve (run make build first)")
	flag.StringVar(&o.dbURL, "db-url", "", "PostgreSQL server URL (postgres://…); loadserve creates a fresh database on it, named loadserve_<pid>_<time>, and drops it at the end. Empty: a fresh SQLite file in a temporary directory")
	flag.IntVar(&o.agents, "agents", 32, "concurrent pushers, each a cluster of its own (load-000, load-001, …)")
	flag.IntVar(&o.namespaces, "namespaces", 500, "namespaces of each pushed inventory (hack/corpus.Cluster; ~1.2 MB of JSON, ~107 KB gzipped at 500)")
	flag.StringVar(&o.targets, "targets", "1.36,1.37", "serve's --target; the inventories run v1.35, so 1.36,1.37 means exactly two evaluations a push (the next minor, 1.36, is one of them)")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "how long pushers and readers run")
	flag.IntVar(&o.readers, "readers", 0, "concurrent readers polling GET /api/v1/fleet back to back (or every -read-interval)")
	flag.DurationVar(&o.readInterval, "read-interval", 0, "pause between one reader's fleet GETs")
	flag.IntVar(&o.pool, "pool", 0, "envelopes encoded per agent before the clock starts (0: one a second per agent over -duration, plus one); past them an agent encodes on the fly, which the report counts")
	flag.IntVar(&o.seedClusters, "seed-clusters", 0, "fill the store with this many clusters before serve starts, directly through the store package (not over HTTP), for read benchmarks")
	flag.IntVar(&o.seedHistory, "seed-history", 30, "snapshots per seeded cluster, each evaluated at every seeded target")
	flag.IntVar(&o.seedTargets, "seed-targets", 4, "targets per seeded snapshot: 1.36, 1.37, …; serve then runs with these as --target (at most 4)")
	flag.IntVar(&o.big, "big", 0, "instead of pushers: this many clients push a -big-bytes envelope at once, once")
	flag.IntVar(&o.bigBytes, "big-bytes", push.MaxBytes, "decompressed size of each -big envelope, at most serve's default --max-snapshot-bytes, 20 MiB")
	flag.BoolVar(&o.keep, "keep", false, "keep the SQLite directory or PostgreSQL database afterwards (its name is printed)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./hack/loadserve [flags]\n\n"+
			"  go run ./hack/loadserve -agents 32 -namespaces 500 -duration 60s -readers 2\n"+
			"  go run ./hack/loadserve -seed-clusters 1000 -seed-history 30 -seed-targets 4 -agents 0 -readers 4 -duration 30s\n"+
			"  go run ./hack/loadserve -big 16\n"+
			"  go run ./hack/loadserve -db-url \"$UPGRADESCOPE_TEST_POSTGRES_URL\" …   (PostgreSQL instead of SQLite)\n\nflags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "loadserve:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "loadserve:", err)
		os.Exit(1)
	}
}

func (o *options) check() error {
	switch {
	case o.seedClusters > 0 && (o.seedTargets < 1 || o.seedTargets > 4):
		return fmt.Errorf("-seed-targets %d: want 1 to 4 (serve's --target takes at most 4)", o.seedTargets)
	case o.seedClusters > 0 && o.seedHistory < 1:
		return fmt.Errorf("-seed-history %d: want at least 1", o.seedHistory)
	case o.big == 0 && o.agents == 0 && o.readers == 0:
		return fmt.Errorf("nothing to measure: give -agents, -readers or -big")
	case o.bigBytes > push.MaxBytes:
		return fmt.Errorf("-big-bytes %d: serve refuses pushes over %d bytes", o.bigBytes, push.MaxBytes)
	}
	if o.seedClusters > 0 {
		o.targets = seededTargets(o.seedTargets)
	}
	return nil
}

// seededTargets are the n minors after the seeded clusters' v1.35.
func seededTargets(n int) string {
	t := make([]string, n)
	for i := range t {
		t[i] = fmt.Sprintf("1.%d", 36+i)
	}
	return strings.Join(t, ",")
}

func run(o options) error {
	db, err := freshStore(o)
	if err != nil {
		return err
	}
	defer db.cleanup(o.keep)
	if o.seedClusters > 0 {
		if err := seed(db.dsn, o); err != nil {
			return err
		}
	}
	// serve starts before the envelopes are encoded: Linux counts a parent's resident set
	// at the fork in its child's ru_maxrss (the pre-exec peak carries across exec), so a
	// pool of hundreds of megabytes held first showed as serve's maxrss.
	child, err := startServe(o, db)
	if err != nil {
		return err
	}
	var pool *envelopes
	if o.big == 0 && o.agents > 0 {
		pool = newEnvelopes(o)
	}
	before := machine.LoadAverage()
	res, runErr := measure(o, child, pool)
	usage, stopErr := child.stop()
	res.after, res.usage = machine.LoadAverage(), usage
	res.before, res.store = before, db.kind
	if runErr != nil {
		return runErr
	}
	if stopErr != nil {
		return stopErr
	}
	res.print(o)
	return nil
}

// measure runs the mode o asks for against the child.
func measure(o options, child *serveChild, pool *envelopes) (*results, error) {
	res := newResults()
	res.idleHWM = child.hwm()
	if o.big > 0 {
		return res, bigPushes(o, child, res)
	}
	return res, loadRun(o, child, pool, res)
}
