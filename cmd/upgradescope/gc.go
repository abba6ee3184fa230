package main

import (
	"os"
	"runtime/debug"
)

// One-shot commands (scan, inventory, eval) allocate fast and exit: at Go's default GOGC=100
// a 100k-object scan spends a third of its CPU collecting garbage. They collect half as
// often, under a soft limit that caps the heap at about 36 MiB so peak RSS stays near the
// 100 MiB budget (86–88 MiB at 100,000 objects before issue 36 linked Helm's template engine,
// 99–109 MiB since: docs/performance.md). The limit only paces the collector because the live heap stays far below
// it: about 15 MiB at 100,000 objects and at 500,000 alike, since the collectors keep
// bounded evidence (docs/performance.md). A live heap that grew towards the limit would make
// the collector run back to back; TestTheInventoryOfARepositoryWithManyImagesStaysSmall and
// the 500k row of make bench watch for that. GOGC and GOMEMLIMIT in the environment win;
// the agent, which runs for days, keeps Go's defaults.
const (
	oneShotGCPercent   = 200
	oneShotMemoryLimit = 50 << 20
)

// The fleet server decodes and evaluates every pushed snapshot, megabytes of short-lived
// garbage each: at GOGC=100 collecting it was a fifth of the server's CPU under 32 pushers.
// It collects a third as often, under a soft limit that holds the heap, and so peak RSS,
// near the 300 MiB budget of docs/performance.md; past the limit (sixteen 20 MiB pushes at
// once) the collector runs as often as it must, up to half the CPU, which Go caps.
const (
	serveGCPercent   = 300
	serveMemoryLimit = 240 << 20
)

// fix holds the files it rewrites until it prints or writes them, so its live heap grows with
// the input (tens of MiB per hundred MB of manifests, docs/performance.md) where a scan's does
// not: under the one-shot 50 MiB limit its collector ran back to back, and fix took 2.6 times
// a scan's time on the 100k corpus. It collects at the one-shot pace with no soft limit
// below what the input makes necessary.
const fixMemoryLimit = 1 << 30

func tuneGCForOneShot() { tuneGC(oneShotGCPercent, oneShotMemoryLimit) }

func tuneGCForFix() { tuneGC(oneShotGCPercent, fixMemoryLimit) }

func tuneGCForServe() { tuneGC(serveGCPercent, serveMemoryLimit) }

// tuneGC sets the collector's pace and soft limit, each unless the environment sets it.
func tuneGC(percent int, limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
