package files

import (
	"bytes"
	"sync"
)

// MaxDocumentNodes bounds the YAML nodes one document may parse into, and the nodes all
// decoders of the process hold parsed at once. Bytes alone do not bound a parse: a parsed node
// costs about 190 bytes, so 15 MiB of "1," parse into 1.4 GiB. The largest real documents
// stay well below it: an object etcd can store (1.5 MiB of JSON) bounds to about 115,000, a
// 330 kB CRD of the Gateway API to about 10,000, the whole Kubernetes OpenAPI document
// (3.8 MB of JSON) to 280,000. At the bound a parse holds about 60 MiB and takes about 1.5 s
// here, under the one-shot commands' 50 MiB soft memory limit (cmd/upgradescope/gc.go).
const MaxDocumentNodes = 300_000

// nodeWeights are the indicators that can start a node, each with the most nodes it can
// start: a ":" a key and its value, a "," or "{" the next flow key and its implicit null
// value, a "-" or "[" one item, a "?" an explicit key and its value.
var nodeWeights = [...]struct {
	c byte
	n int
}{{':', 2}, {',', 2}, {'{', 2}, {'?', 2}, {'-', 1}, {'[', 1}}

// nodeBound is an upper bound on the nodes text parses into, counted without a parse.
// Indicators inside scalars count too, so prose costs more than it parses into; comments
// and scalars become nodes' strings, bounded by the document's bytes.
func nodeBound(text []byte) int {
	n := 2 // the document and its root
	for _, w := range nodeWeights {
		n += w.n * bytes.Count(text, []byte{w.c})
	}
	return n
}

// parsing is the process's share of MaxDocumentNodes: parallel workers, and an agent's Helm
// collection beside them, hold at most that many parsed nodes at once, whatever the number
// of CPUs.
var parsing = newNodeBudget(MaxDocumentNodes)

// nodeBudget is a weighted semaphore that serves its callers in turn, so a large document is
// not starved by a stream of small ones.
type nodeBudget struct {
	turn sync.Mutex // held by the one caller waiting for room
	mu   sync.Mutex
	room *sync.Cond
	free int
}

func newNodeBudget(n int) *nodeBudget {
	b := &nodeBudget{free: n}
	b.room = sync.NewCond(&b.mu)
	return b
}

// acquire waits until n nodes are free and takes them; n must not exceed the budget.
func (b *nodeBudget) acquire(n int) {
	b.turn.Lock()
	b.mu.Lock()
	for b.free < n {
		b.room.Wait()
	}
	b.free -= n
	b.mu.Unlock()
	b.turn.Unlock()
}

// release gives back n nodes that acquire took.
func (b *nodeBudget) release(n int) {
	b.mu.Lock()
	b.free += n
	b.room.Signal()
	b.mu.Unlock()
}
