package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/push"
)

// exportInventory writes the inventory `upgradescope inventory --files` makes of the
// bookinfo fixture, its seed file excluded, as a CI job would export it.
func exportInventory(t *testing.T, dir string) string {
	t.Helper()
	r := runCLI(t, "inventory", "--files", "testdata/exclude/bookinfo", "--exclude", "**/ratings_data.json", pinned)
	if r.code != 0 {
		t.Fatalf("inventory: exit %d: %s", r.code, r.stderr)
	}
	return write(t, dir, "inventory.json", r.stdout)
}

func TestPushDeliversAnExportedInventoryToARealServe(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	token := mintIngestToken(t, "ci-bookinfo", "--db", db)
	tokenFile := writeSecret(t, dir, "ingest.token", token)
	wrongToken := writeSecret(t, dir, "wrong.token", strings.Repeat("0", 64))
	p := startServe(t, "--db", db, "--target", "1.37")
	inv := exportInventory(t, dir)
	badInv := write(t, dir, "bad.json", `{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {}, "apiUsage": "none"}`)

	base := func(extra ...string) []string {
		return append([]string{"push", "--inventory", inv, "--server", p.url, "--ingest-token-file", tokenFile}, extra...)
	}
	for _, step := range []struct {
		name   string
		args   []string
		code   int
		stdout string // the whole of stdout, when set
		stderr []string
		json   bool
	}{
		{name: "a new inventory is stored and evaluated at the server's targets", args: base("--cluster-name", "ci-bookinfo"),
			code: 0, stdout: "cluster ci-bookinfo: snapshot 1 stored; 1.37 ready (score 100)\n"},
		{name: "the same inventory again is a duplicate and says where its verdicts are read", args: base("--cluster-name", "ci-bookinfo"),
			code: 0, stdout: "cluster ci-bookinfo: snapshot 1 unchanged (a duplicate of its latest; nothing new stored); its stored verdicts: GET " +
				p.url + "/api/v1/clusters/1\n"},
		{name: "json prints the server's answer", args: base("--cluster-name", "ci-bookinfo", "-o", "json"),
			code: 0, json: true},
		{name: "the agent's old flag spellings work, with a warning", args: []string{"push", "--inventory", inv, "--server-url", p.url,
			"--server-token-file", tokenFile, "--cluster-name", "ci-bookinfo"},
			code: 0, stderr: []string{"--server-url is deprecated; use --server", "--server-token-file is deprecated; use --ingest-token-file"}},
		{name: "a cluster's token pushing another name is refused with the server's message", args: base("--cluster-name", "ci-other"),
			code: 1, stderr: []string{`push refused (403 Forbidden): this token pushes only as cluster "ci-bookinfo", not "ci-other"; check the server token`}},
		{name: "an unknown token is refused", args: []string{"push", "--inventory", inv, "--server", p.url, "--ingest-token-file", wrongToken, "--cluster-name", "ci-bookinfo"},
			code: 1, stderr: []string{"push refused (401 Unauthorized)", "check the server token"}},
		{name: "an inventory the schema refuses is named with its pointer and never sent", args: []string{"push", "--inventory", badInv, "--server", p.url,
			"--ingest-token-file", tokenFile, "--cluster-name", "ci-bookinfo"},
			code: 1, stderr: []string{badInv + ": ", "/apiUsage"}},
		{name: "a cluster name that is not a subdomain is refused before anything is read", args: base("--cluster-name", "CI_Bookinfo"),
			code: 1, stderr: []string{`--cluster-name: cluster name "CI_Bookinfo" is not an RFC 1123 subdomain`}},
		{name: "a push without a token says where one comes from", args: []string{"push", "--inventory", inv, "--server", p.url, "--cluster-name", "ci-bookinfo"},
			code: 1, stderr: []string{"--ingest-token-file, --ingest-token or $UPGRADESCOPE_SERVER_TOKEN"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			t.Setenv("UPGRADESCOPE_SERVER_TOKEN", "")
			r := runCLI(t, step.args...)
			if r.code != step.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, step.code, r.stdout, r.stderr)
			}
			if step.stdout != "" && r.stdout != step.stdout {
				t.Errorf("stdout = %q, want %q", r.stdout, step.stdout)
			}
			for _, want := range step.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stdout+r.stderr, token) {
				t.Error("the output shows the token")
			}
			if step.json {
				var a map[string]any
				if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || a["snapshotId"] != 1.0 || a["duplicate"] != true || a["clusterId"] == 0.0 || len(a) != 3 {
					t.Errorf("json answer %q (%v), want snapshot 1, a duplicate, and no evaluated or verdicts (docs/server.md)", r.stdout, err)
				}
			}
		})
	}
	if n := ingested(t, p.url, "invalid"); n != 0 {
		t.Errorf("the server saw %d invalid pushes; an inventory the schema refuses must not be sent", n)
	}
	var clusters struct {
		Clusters []struct {
			Name string `json:"name"`
		} `json:"clusters"`
	}
	if code := getJSON(t, p.url, "/api/v1/clusters", "", &clusters); code != http.StatusOK || len(clusters.Clusters) != 1 || clusters.Clusters[0].Name != "ci-bookinfo" {
		t.Errorf("GET /api/v1/clusters = %d %+v, want ci-bookinfo alone", code, clusters)
	}
}

// serverDocsPush is docs/server.md's push example: the command, what it prints and the
// envelope it shows.
type serverDocsPush struct {
	args     []string
	printed  string
	envelope map[string]any
}

func readServerDocsPush(t *testing.T) serverDocsPush {
	t.Helper()
	data, err := os.ReadFile("../../docs/server.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Push an exported inventory")
	if !ok {
		t.Fatal("docs/server.md has no push section")
	}
	block := exampleBlock(section, "    upgradescope push --inventory")
	if len(block) < 3 {
		t.Fatalf("docs/server.md's push example is %q; want the command and what it prints", block)
	}
	var ex serverDocsPush
	command := strings.ReplaceAll(strings.Join(block[:2], " "), `\`, "")
	ex.args = strings.Fields(command)[1:]
	ex.printed = block[2] + "\n"
	_, rest, _ := strings.Cut(section, "```json\n")
	body, _, _ := strings.Cut(rest, "```")
	if err := json.Unmarshal([]byte(body), &ex.envelope); err != nil {
		t.Fatalf("docs/server.md's envelope is not JSON: %v", err)
	}
	return ex
}

// withFlag answers args with the value of flag replaced.
func withFlag(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out[:len(out)-1] {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

// TestTheServerDocsPushExampleIsWhatPushSendsAndServeAnswers holds docs/server.md to the
// command: its envelope is byte for byte (as JSON) what push sends for its inventory, with
// the headers it shows, and a real serve answers its command with the line it shows.
func TestTheServerDocsPushExampleIsWhatPushSendsAndServeAnswers(t *testing.T) {
	ex := readServerDocsPush(t)
	dir := t.TempDir()
	inv, err := json.Marshal(ex.envelope["inventory"])
	if err != nil {
		t.Fatal(err)
	}
	invFile := write(t, dir, "inventory.json", string(inv))
	name, _ := ex.envelope["clusterName"].(string)
	tokenFile := writeSecret(t, dir, "docs.token", strings.Repeat("d", 64))
	args := withFlag(withFlag(ex.args, "--inventory", invFile), "--ingest-token-file", tokenFile)

	t.Run("the envelope and headers are what push sends", func(t *testing.T) {
		var mu sync.Mutex
		var got *http.Request
		var body []byte
		capture := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got, body = r, readGzip(t, r.Body)
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"clusterId":1,"snapshotId":1,"duplicate":false,"evaluated":["1.36"],`+
				`"verdicts":[{"target":"1.36","verdict":"unknown","score":100,"blockers":0}]}`)
		}))
		defer capture.Close()
		if r := runCLI(t, withFlag(args, "--server", capture.URL)...); r.code != 0 || r.stdout != ex.printed {
			t.Fatalf("push to a capturing server: exit %d, stdout %q, want %q; stderr %s", r.code, r.stdout, ex.printed, r.stderr)
		}
		mu.Lock()
		defer mu.Unlock()
		var sent map[string]any
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sent, ex.envelope) {
			t.Errorf("push sent %s\nthe docs show %v", body, ex.envelope)
		}
		if got.Method != http.MethodPost || got.URL.Path != "/api/v1/snapshots" || got.Header.Get("Content-Type") != "application/json" ||
			got.Header.Get("Content-Encoding") != "gzip" || got.Header.Get("Authorization") != "Bearer "+strings.Repeat("d", 64) {
			t.Errorf("push sent %s %s with headers %v, not what the docs show", got.Method, got.URL.Path, got.Header)
		}
	})

	t.Run("a real serve answers the command with the line shown", func(t *testing.T) {
		db := filepath.Join(dir, "fleet.db")
		tokenFile := writeSecret(t, dir, "ingest.token", mintIngestToken(t, name, "--db", db))
		p := startServe(t, "--db", db)
		r := runCLI(t, withFlag(withFlag(args, "--server", p.url), "--ingest-token-file", tokenFile)...)
		if r.code != 0 || r.stdout != ex.printed {
			t.Errorf("push: exit %d, stdout %q, want %q as docs/server.md shows; stderr %s", r.code, r.stdout, ex.printed, r.stderr)
		}
	})
}

func readGzip(t *testing.T, r io.Reader) []byte {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Error(err)
		return nil
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, zr); err != nil {
		t.Error(err)
	}
	return buf.Bytes()
}

func TestPushSaysEachTargetsVerdictAndNoScoreForAnUnknownOne(t *testing.T) {
	v := func(target, verdict string, score, blockers int) push.Verdict {
		return push.Verdict{Target: target, Verdict: verdict, Score: score, Blockers: blockers}
	}
	for _, tc := range []struct {
		name string
		a    push.Answer
		want string
	}{
		{"a blocked target gives its blockers and score", push.Answer{SnapshotID: 1, Evaluated: []string{"1.37"},
			Verdicts: []push.Verdict{v("1.37", "blocked", 50, 2)}}, "cluster c: snapshot 1 stored; 1.37 blocked (2 blockers, score 50)\n"},
		{"one blocker", push.Answer{SnapshotID: 1, Evaluated: []string{"1.37"},
			Verdicts: []push.Verdict{v("1.37", "blocked", 75, 1)}}, "cluster c: snapshot 1 stored; 1.37 blocked (1 blocker, score 75)\n"},
		{"several targets, an unknown one without a score", push.Answer{SnapshotID: 4, Evaluated: []string{"1.36", "1.37"},
			Verdicts: []push.Verdict{v("1.36", "ready", 95, 0), v("1.37", "unknown", 100, 0)}},
			"cluster c: snapshot 4 stored; 1.36 ready (score 95), 1.37 unknown (score n/a: a required check was not assessed)\n"},
		{"a server that answers no verdicts: the targets", push.Answer{SnapshotID: 1, Evaluated: []string{"1.36", "1.37"}},
			"cluster c: snapshot 1 stored, evaluated at 1.36, 1.37\n"},
		{"an evaluation that failed", push.Answer{SnapshotID: 1}, "cluster c: snapshot 1 stored, evaluated at no target\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printPushAnswer(streams{out: &out}, &pushFlags{clusterName: "c", output: "text"}, tc.a); err != nil || out.String() != tc.want {
				t.Errorf("printed %q, %v; want %q", out.String(), err, tc.want)
			}
		})
	}
}

// An inventory push sends does not say what collected it, so a real serve must not name the
// pushing binary as its agent: the API shows no agent version, and the cluster's page and its
// HTML export fix the missing kb probes by collecting again, naming no agent.
func TestAPushedInventoryIsNotBlamedOnThePushingBinary(t *testing.T) {
	ex := readServerDocsPush(t)
	dir := t.TempDir()
	inv, err := json.Marshal(ex.envelope["inventory"])
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "fleet.db")
	ingest := writeSecret(t, dir, "ingest.token", mintIngestToken(t, "prod-eu-1", "--db", db))
	const read = "push-collector-read-token"
	p := startServe(t, "--db", db, "--target", "1.36", "--read-token-file", writeSecret(t, dir, "read.token", read))
	r := runCLI(t, "push", "--inventory", write(t, dir, "inventory.json", string(inv)), "--server", p.url,
		"--ingest-token-file", ingest, "--cluster-name", "prod-eu-1", "-o", "json")
	var a push.Answer
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &a) != nil {
		t.Fatalf("push: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	var cluster struct {
		Snapshot struct {
			AgentVersion *string `json:"agentVersion"`
		} `json:"snapshot"`
	}
	id := fmt.Sprint(a.ClusterID)
	if code := getJSON(t, p.url, "/api/v1/clusters/"+id, read, &cluster); code != http.StatusOK ||
		cluster.Snapshot.AgentVersion == nil || *cluster.Snapshot.AgentVersion != "" {
		t.Errorf("GET /api/v1/clusters/%s = %d, agentVersion %v; want \"\" (push does not know the collector)", id, code, cluster.Snapshot.AgentVersion)
	}
	const fix = "Fix: collect the inventory again with a release whose kb is "
	for _, path := range []string{"/ui/clusters/" + id + "?target=1.36", "/api/v1/clusters/" + id + "/export?format=html&target=1.36"} {
		t.Run(path, func(t *testing.T) {
			code, body := getBody(t, p.url+path, read)
			if code != http.StatusOK || !strings.Contains(body, fix) {
				t.Errorf("GET %s = %d; want the fix %q in:\n%.3000s", path, code, fix, body)
			}
			for _, blame := range []string{"the agent (", "upgradescope " + version, "upgrade the agent"} {
				if strings.Contains(body, blame) {
					t.Errorf("GET %s names the pushing binary as the collector (%q)", path, blame)
				}
			}
		})
	}
}

// getBody GETs url with a bearer token and answers the status and the body.
func getBody(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, string(body)
}
