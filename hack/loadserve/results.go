package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// results gathers every answer; pushers and readers add to it concurrently.
type results struct {
	mu           sync.Mutex
	pushLat      []time.Duration
	pushStatus   map[int]int
	newSnapshots int
	duplicates   int
	evaluated    map[int]int // evaluations per new snapshot → snapshots
	readLat      []time.Duration
	readStatus   map[int]int
	elapsed      time.Duration
	onTheFly     int

	fleetClusters, fleetCells, fleetBytes int
	fleetTargets                          []string

	bigPlain, bigWire int

	store, before, after string
	idleHWM              int64
	usage                childUsage
}

func newResults() *results {
	return &results{pushStatus: map[int]int{}, evaluated: map[int]int{}, readStatus: map[int]int{}}
}

func (r *results) push(status int, took time.Duration, ans pushAnswer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pushLat = append(r.pushLat, took)
	r.pushStatus[status]++
	switch {
	case status == 202 && !ans.Duplicate:
		r.newSnapshots++
		r.evaluated[len(ans.Evaluated)]++
	case status == 200:
		r.duplicates++
	}
}

func (r *results) read(status int, took time.Duration, _ int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.readLat = append(r.readLat, took)
	r.readStatus[status]++
}

// percentile is the nearest-rank percentile p (0–100) of d, 0 when empty.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

// statuses renders a status count map as "202×1200, 503×3" (0 is a transport error).
func statuses(m map[int]int) string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d×%d", s, m[s]))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func mib(kib int64) string { return fmt.Sprintf("%d MiB", kib/1024) }

// print writes the run as a Markdown table, one row, with the context above it.
func (r *results) print(o options) {
	fmt.Printf("\nstore %s; load average before %s, after %s; serve idle VmHWM %s\n", r.store, r.before, r.after, mib(r.idleHWM))
	if r.onTheFly > 0 {
		fmt.Printf("note: %d envelopes were encoded during the run (the pool ran out): raise -pool\n", r.onTheFly)
	}
	fmt.Println()
	switch {
	case o.big > 0:
		r.printBig(o)
	case o.agents == 0:
		r.printReads(o)
	default:
		r.printLoad(o)
	}
}

func (r *results) printLoad(o options) {
	fmt.Println("| store | agents | namespaces | targets | readers | duration | new snapshots/s | evaluations per snapshot | push p50 / p90 / p99 | push statuses | fleet GET p50 / p99 | fleet GETs | fleet | serve peak RSS (VmHWM / maxrss) | serve CPU | load avg before → after |")
	fmt.Println("|---|---:|---:|---|---:|---:|---:|---|---|---|---|---:|---|---|---:|---|")
	rate := float64(r.newSnapshots) / r.elapsed.Seconds()
	fmt.Printf("| %s | %d | %d | %s | %d | %.1f s | %.1f | %s | %s / %s / %s | %s | %s / %s | %d | %d clusters × %d targets, %d cells, %d KB | %s / %s | %.1f s | %s → %s |\n",
		r.store, o.agents, o.namespaces, o.targets, o.readers, r.elapsed.Seconds(), rate, evalCounts(r.evaluated),
		ms(percentile(r.pushLat, 50)), ms(percentile(r.pushLat, 90)), ms(percentile(r.pushLat, 99)), statuses(r.pushStatus),
		ms(percentile(r.readLat, 50)), ms(percentile(r.readLat, 99)), len(r.readLat),
		r.fleetClusters, len(r.fleetTargets), r.fleetCells, r.fleetBytes/1000,
		mib(r.usage.sampledHWM), mib(r.usage.maxRSS), r.usage.cpu.Seconds(), r.before, r.after)
	if r.newSnapshots > 0 {
		fmt.Printf("\nserve CPU per new snapshot: %.0f ms\n", float64(r.usage.cpu.Milliseconds())/float64(r.newSnapshots))
	}
}

// printReads is the table of a run without pushers: the fleet reads only.
func (r *results) printReads(o options) {
	fmt.Println("| store | readers | duration | fleet GET p50 / p90 / p99 | statuses | fleet GETs | fleet | serve peak RSS (VmHWM / maxrss) | serve CPU per GET | load avg before → after |")
	fmt.Println("|---|---:|---:|---|---|---:|---|---|---:|---|")
	perGet := 0.0
	if len(r.readLat) > 0 {
		perGet = float64(r.usage.cpu.Milliseconds()) / float64(len(r.readLat))
	}
	fmt.Printf("| %s | %d | %.1f s | %s / %s / %s | %s | %d | %d clusters × %d targets, %d cells, %d KB | %s / %s | %.0f ms | %s → %s |\n",
		r.store, o.readers, r.elapsed.Seconds(), ms(percentile(r.readLat, 50)), ms(percentile(r.readLat, 90)),
		ms(percentile(r.readLat, 99)), statuses(r.readStatus), len(r.readLat),
		r.fleetClusters, len(r.fleetTargets), r.fleetCells, r.fleetBytes/1000,
		mib(r.usage.sampledHWM), mib(r.usage.maxRSS), perGet, r.before, r.after)
}

func (r *results) printBig(o options) {
	fmt.Println("| store | clients | envelope (decompressed / gzip) | statuses | latency p50 / max | wall | serve peak RSS (VmHWM / maxrss) | serve idle VmHWM | load avg before → after |")
	fmt.Println("|---|---:|---|---|---|---:|---|---:|---|")
	fmt.Printf("| %s | %d | %.1f MiB / %d KB | %s | %s / %s | %.1f s | %s / %s | %s | %s → %s |\n",
		r.store, o.big, float64(r.bigPlain)/(1<<20), r.bigWire/1000, statuses(r.pushStatus),
		ms(percentile(r.pushLat, 50)), ms(percentile(r.pushLat, 100)), r.elapsed.Seconds(),
		mib(r.usage.sampledHWM), mib(r.usage.maxRSS), mib(r.idleHWM), r.before, r.after)
}

// evalCounts renders how many targets each new snapshot was evaluated at: "2 (all)".
func evalCounts(m map[int]int) string {
	if len(m) == 0 {
		return "—"
	}
	if len(m) == 1 {
		for k := range m {
			return fmt.Sprintf("%d (all)", k)
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d: %d snapshots", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
