package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
)

func writeRSAKeys(t *testing.T, dir string) (private, public string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	private, public = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem")
	_ = os.WriteFile(private, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	_ = os.WriteFile(public, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
	return private, public
}

// The signed bundle is an ordinary OPA bundle: stock `opa build --verification-key` accepts
// it and refuses the unsigned one, as our own verify does.
func TestBundleBuildSignVerifyRoundTripAndStockOPAAgrees(t *testing.T) {
	dir := t.TempDir()
	private, public := writeRSAKeys(t, dir)
	unsigned, signed := filepath.Join(dir, "b.tar.gz"), filepath.Join(dir, "b.signed.tar.gz")
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bundle", "build", "../../policies/rules", "-o", unsigned, "--revision", "2026-11-29.5"}, 0, ""},
		{[]string{"bundle", "sign", unsigned, "--signing-key", private, "-o", signed}, 0, ""},
		{[]string{"bundle", "verify", signed, "--key", public}, 0, "signature verified (revision 2026-11-29.5)"},
		{[]string{"bundle", "verify", unsigned, "--key", public}, 1, "missing .signatures.json"},
		{[]string{"bundle", "inspect", signed}, 0, `"signed": true`},
	}
	for _, s := range steps {
		r := runCLI(t, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.want) {
			t.Fatalf("%v: exit %d, output %q%q; want %d with %q", s.args, r.code, r.stdout, r.stderr, s.code, s.want)
		}
	}
	if info, err := os.Stat(signed); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("signed bundle mode = %v (%v), want 0600", info.Mode().Perm(), err)
	}
	opa := func(bundle string) error {
		return exec.Command("go", "tool", "opa", "build", "-b", bundle, "--verification-key", public, "-o", filepath.Join(dir, "out.tar.gz")).Run()
	}
	if err := opa(signed); err != nil {
		t.Errorf("stock opa build --verification-key refused our signed bundle: %v", err)
	}
	if err := opa(unsigned); err == nil {
		t.Error("stock opa build --verification-key accepted an unsigned bundle")
	}
}

// kbBundle builds and signs the shipped kb as a later revision that knows Kubernetes only up
// to horizon: what a knowledge update looks like on the wire.
func kbBundle(t *testing.T, dir, private, revision, horizon string) (unsigned, signed string) {
	t.Helper()
	src := filepath.Join(dir, "kb-"+revision)
	if err := os.CopyFS(src, os.DirFS("../../policies/kb")); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(src, "upgradescope", "kb", "meta", "data.json")
	raw, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.Replace(string(raw), `"horizon": "1.37"`, `"horizon": "`+horizon+`"`, 1))
	if err := os.WriteFile(meta, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// The directory itself is the new revision too, for --bundle DIR.
	manifest := filepath.Join(src, ".manifest")
	m, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	m = regexp.MustCompile(`"revision": "[^"]*"`).ReplaceAll(m, []byte(`"revision": "`+revision+`"`))
	if err := os.WriteFile(manifest, m, 0o600); err != nil {
		t.Fatal(err)
	}
	unsigned, signed = src+".tar.gz", src+".signed.tar.gz"
	for _, args := range [][]string{
		{"bundle", "build", src, "-o", unsigned, "--revision", revision},
		{"bundle", "sign", unsigned, "--signing-key", private, "-o", signed},
	} {
		if r := runCLI(t, args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	return unsigned, signed
}

func TestScanLoadsSignedBundlesFromPathsAndURLsAndRefusesTheRest(t *testing.T) {
	dir := t.TempDir()
	private, public := writeRSAKeys(t, dir)
	_, otherPublic := writeRSAKeys(t, t.TempDir())
	unsigned, signed := kbBundle(t, dir, private, "2027-01-05.1", "1.36")
	served := t.TempDir()
	if err := os.CopyFS(served, os.DirFS(filepath.Dir(signed))); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bundles.Handler(served, bundles.ServeOptions{}))
	defer srv.Close()
	url := srv.URL + "/" + filepath.Base(signed)
	scan := []string{"scan", "--files", examples, "--target", "1.37", "--fail-on", "never", "-o", "json", pinned}
	tests := []struct {
		name       string
		args       []string
		code       int
		wantSource string
		wantError  string
	}{
		{"a signed kb from a path replaces the embedded one", []string{"--bundle", signed, "--bundle-verification-key", public}, 0, signed, ""},
		{"a signed kb from a URL replaces the embedded one", []string{"--bundle", url, "--bundle-verification-key", public}, 0, url, ""},
		{"an unsigned local bundle loads without a key", []string{"--bundle", unsigned}, 0, unsigned, ""},
		{"a URL without a key is refused", []string{"--bundle", url}, 1, "", "must be signed"},
		{"an unsigned bundle is refused when a key is given", []string{"--bundle", unsigned, "--bundle-verification-key", public}, 1, "", ".signatures.json"},
		{"another key is refused", []string{"--bundle", signed, "--bundle-verification-key", otherPublic}, 1, "", "verification"},
		{"two kb bundles are refused", []string{"--bundle", signed, "--bundle", unsigned}, 1, "", "both replace the built-in kb bundle"},
		{"a missing bundle names its path", []string{"--bundle", filepath.Join(dir, "nope.tar.gz")}, 1, "", "nope.tar.gz"},
		{"a bundle directory loads like a tarball", []string{"--bundle", filepath.Join(dir, "kb-2027-01-05.1")}, 0, filepath.Join(dir, "kb-2027-01-05.1"), ""},
		{"a directory without a manifest is refused", []string{"--bundle", examples}, 1, "", "no .manifest"},
		{"eval takes the same flags", []string{"eval", "--inventory", "../../testdata/clean-is-ready/inventory.json", "--bundle", signed, "--bundle-verification-key", public}, 0, signed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string(nil), scan...), tt.args...)
			if tt.args[0] == "eval" {
				args = append([]string{"eval", "--target", "1.37", "--fail-on", "never", "-o", "json", pinned}, tt.args[1:]...)
			}
			r := runCLI(t, args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.wantError) {
				t.Fatalf("exit %d, stderr %q; want %d with %q", r.code, r.stderr, tt.code, tt.wantError)
			}
			if tt.code != 0 {
				return
			}
			var rep engine.Report
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatal(err)
			}
			kb := rep.Bundles[1]
			if kb.Name != "kb" || kb.Revision != "2027-01-05.1" || kb.Source != tt.wantSource || rep.Bundles[0].Source != engine.OriginEmbedded {
				t.Errorf("bundles = %+v, want embedded rules and kb 2027-01-05.1 from %s", rep.Bundles, tt.wantSource)
			}
			stale := false
			for _, f := range rep.Targets[0].Findings {
				stale = stale || f.Key == "kb-stale"
			}
			if rep.KB.Horizon != "1.36" || !stale {
				t.Errorf("horizon %s, kb-stale finding %v: want the loaded kb's horizon, and 1.37 judged past it", rep.KB.Horizon, stale)
			}
		})
	}
}

// The custom-pack loop of docs/custom-rules.md: build the example pack, sign it, and scan
// with it beside the built-ins; its finding appears and the report names its revision.
func TestACustomPackShipsAsASignedBundle(t *testing.T) {
	dir := t.TempDir()
	private, public := writeRSAKeys(t, dir)
	unsigned, signed := filepath.Join(dir, "acme.tar.gz"), filepath.Join(dir, "acme.signed.tar.gz")
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o700); err != nil {
		t.Fatal(err)
	}
	prod := "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: db\n  namespace: prod-web\n"
	if err := os.WriteFile(filepath.Join(manifests, "endpoints.yaml"), []byte(prod), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "build", "../../examples/policies", "-o", unsigned},
		{"bundle", "sign", unsigned, "--signing-key", private, "-o", signed},
	} {
		if r := runCLI(t, args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	r := runCLI(t, "scan", "--files", manifests, "--target", "1.37", "--bundle", signed, "--bundle-verification-key", public, "--fail-on", "never", pinned)
	for _, want := range []string{"[acme-prod-deprecated] v1 Endpoints is deprecated and still used in production", "Bundles:  rules 2026-11-30.1, kb 2026-11-29.5, acme 2026-11-29.1"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, stdout lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}

func TestBundleBuildRefusesPacksThatWouldNotLoad(t *testing.T) {
	pack := func(manifest, rego string) string {
		dir := t.TempDir()
		if manifest != "" {
			_ = os.WriteFile(filepath.Join(dir, ".manifest"), []byte(manifest), 0o600)
		}
		p := filepath.Join(dir, "upgradescope", "custom", "x")
		_ = os.MkdirAll(p, 0o700)
		_ = os.WriteFile(filepath.Join(p, "x.rego"), []byte(rego), 0o600)
		return dir
	}
	const ok = "package upgradescope.custom.x\n\nfindings := set()\n"
	tests := []struct {
		name, dir, want string
	}{
		{"no manifest", pack("", ok), "no .manifest"},
		{"a manifest without roots", pack(`{"revision": "1"}`, ok), "names no roots"},
		{"a call the library does not have", pack(`{"roots": ["upgradescope/custom/x"]}`,
			"package upgradescope.custom.x\n\nimport data.upgradescope.lib.apis\n\nfindings contains apis.nope(1)\n"), "undefined function data.upgradescope.lib.apis.nope"},
		{"a pack claiming a built-in root", pack(`{"roots": ["upgradescope/rules/x"]}`, "package upgradescope.rules.x\n\nfindings := set()\n"), "neither a built-in bundle's roots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "bundle", "build", tt.dir, "-o", filepath.Join(t.TempDir(), "out.tar.gz"))
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 1 with %q", r.code, r.stderr, tt.want)
			}
		})
	}
}
