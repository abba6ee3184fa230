package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/hack/corpus"
)

// agent is one pushing cluster: a name, the UID it binds, and its envelopes.
type agent struct {
	name, uid string
	index     int
	pool      [][]byte
	next      int
}

// envelopes holds every agent's pre-encoded pushes: encoding a 500-namespace inventory
// costs about as much CPU as the server spends on a good part of a push, so it is done
// before the clock starts rather than competing with serve for the two cores.
type envelopes struct {
	namespaces int
	agents     []*agent
	mu         sync.Mutex
	onTheFly   int
}

// agentSeed gives push i of agent a a seed no other push shares, so every push is a
// distinct snapshot.
func agentSeed(a, i int) int { return a*1_000_000 + i + 1 }

func newEnvelopes(o options) *envelopes {
	perAgent := o.pool
	if perAgent <= 0 {
		perAgent = int(o.duration.Seconds()) + 1
	}
	e := &envelopes{namespaces: o.namespaces}
	for a := range o.agents {
		e.agents = append(e.agents, &agent{name: fmt.Sprintf("load-%03d", a), index: a,
			uid: corpus.Cluster(o.namespaces, agentSeed(a, 0)).ClusterID, pool: make([][]byte, perAgent)})
	}
	start := time.Now()
	e.fill(perAgent)
	fmt.Printf("encoded %d envelopes (%d agents × %d) in %.1f s\n", perAgent*o.agents, o.agents, perAgent, time.Since(start).Seconds())
	return e
}

// fill encodes every agent's pool on every core.
func (e *envelopes) fill(perAgent int) {
	jobs := make(chan [2]int)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for j := range jobs {
				a := e.agents[j[0]]
				a.pool[j[1]] = e.encode(a, j[1])
			}
		})
	}
	for i := range perAgent {
		for a := range e.agents {
			jobs <- [2]int{a, i}
		}
	}
	close(jobs)
	wg.Wait()
}

// encode is push i of agent a: the corpus cluster of its seed, under the agent's UID.
func (e *envelopes) encode(a *agent, i int) []byte {
	doc := corpus.Cluster(e.namespaces, agentSeed(a.index, i))
	doc.ClusterID, doc.CollectedAt = a.uid, time.Now().UTC().Truncate(time.Second)
	body, err := push.Encode(push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: a.name,
		AgentVersion: "loadserve", KBVersion: "loadserve", Inventory: doc})
	if err != nil {
		panic(err) // a corpus document always encodes
	}
	return body
}

// take is the agent's next push: from the pool, else encoded now (and counted).
func (e *envelopes) take(a *agent) []byte {
	if a.next < len(a.pool) {
		b := a.pool[a.next]
		a.pool[a.next] = nil
		a.next++
		return b
	}
	e.mu.Lock()
	e.onTheFly++
	e.mu.Unlock()
	a.next++
	return e.encode(a, a.next-1)
}

// pushAnswer is the part of a 200 or 202 the report counts.
type pushAnswer struct {
	Duplicate bool     `json:"duplicate"`
	Evaluated []string `json:"evaluated"`
}

// postSnapshot sends one gzip push and answers its status, latency and answer. Status 0 is
// a transport error.
func postSnapshot(client *http.Client, base string, body []byte) (int, time.Duration, pushAnswer, http.Header) {
	req, err := http.NewRequest(http.MethodPost, base+push.Path, bytes.NewReader(body))
	if err != nil {
		return 0, 0, pushAnswer{}, nil
	}
	req.Header.Set("Content-Type", push.ContentType)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+ingestToken)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, time.Since(start), pushAnswer{}, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	var ans pushAnswer
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted {
		_ = json.Unmarshal(data, &ans)
	}
	return resp.StatusCode, took, ans, resp.Header
}

// pusher pushes a's snapshots back to back until the deadline; a 503 waits its
// Retry-After first, as the agent does.
func pusher(client *http.Client, base string, e *envelopes, a *agent, deadline time.Time, res *results) {
	for time.Now().Before(deadline) {
		status, took, ans, header := postSnapshot(client, base, e.take(a))
		res.push(status, took, ans)
		if status == http.StatusServiceUnavailable {
			wait, _ := strconv.Atoi(header.Get("Retry-After"))
			time.Sleep(min(time.Duration(max(wait, 1))*time.Second, time.Until(deadline)))
		}
	}
}

func newClient(conns int) *http.Client {
	return &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, DisableCompression: true}}
}

// loadRun runs the pushers and readers for o.duration and waits for the last answers.
func loadRun(o options, child *serveChild, e *envelopes, res *results) error {
	client := newClient(o.agents + o.readers)
	start := time.Now()
	deadline := start.Add(o.duration)
	var wg sync.WaitGroup
	if e != nil {
		for _, a := range e.agents {
			wg.Go(func() { pusher(client, child.base, e, a, deadline, res) })
		}
	}
	for range o.readers {
		wg.Go(func() { reader(client, child.base, o.readInterval, deadline, res) })
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if e != nil {
		res.onTheFly = e.onTheFly
	}
	return verifyFleet(client, child.base, res)
}

// bigPushes starts o.big clients at once, each pushing its own padded envelope.
func bigPushes(o options, child *serveChild, res *results) error {
	bodies, plain, err := bigEnvelopes(o)
	if err != nil {
		return err
	}
	res.bigPlain, res.bigWire = plain, len(bodies[0])
	client := newClient(o.big)
	var ready, wg sync.WaitGroup
	ready.Add(1)
	start := time.Now()
	for _, body := range bodies {
		wg.Go(func() {
			ready.Wait()
			status, took, ans, _ := postSnapshot(client, child.base, body)
			res.push(status, took, ans)
		})
	}
	ready.Done()
	wg.Wait()
	res.elapsed = time.Since(start)
	return nil
}

// bigEnvelopes pads one 500-namespace inventory to fill -big-bytes once and pushes it as
// o.big clusters, each with its own name and UID. It answers the gzip bodies and the
// decompressed size of the largest.
func bigEnvelopes(o options) ([][]byte, int, error) {
	doc := corpus.Cluster(o.namespaces, 1)
	// The envelope around the inventory takes about 130 bytes.
	if _, err := corpus.Pad(doc, o.bigBytes-512); err != nil {
		return nil, 0, err
	}
	var bodies [][]byte
	plain := 0
	for i := range o.big {
		c := *doc
		c.ClusterID = corpus.Cluster(1, 900_000+i).ClusterID
		env := push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: fmt.Sprintf("big-%03d", i),
			AgentVersion: "loadserve", KBVersion: "loadserve", Inventory: &c}
		raw, err := json.Marshal(env)
		if err != nil {
			return nil, 0, err
		}
		plain = max(plain, len(raw)+1) // Encode ends the JSON with a newline
		body, err := push.Encode(env)
		if err != nil {
			return nil, 0, err
		}
		bodies = append(bodies, body)
	}
	fmt.Printf("%d envelopes of %d bytes decompressed, %d gzipped\n", o.big, plain, len(bodies[0]))
	return bodies, plain, nil
}
