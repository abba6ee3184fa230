package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// A configuration serve cannot run safely is refused before it listens: exit 1, a message
// that says what to change, and no listening line.
func TestServeRefusesBadFlagsBeforeListening(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a non-loopback address without a read credential names every way out",
			[]string{"--listen", "0.0.0.0:0"},
			[]string{"--read-token", "tokens create --read", "loopback", "--allow-anonymous-read"}},
		{"a publish directory that is not one",
			[]string{"--publish-dir", "/nonexistent/bundles"},
			[]string{"--publish-dir /nonexistent/bundles: want a directory of bundles"}},
		{"a publish directory without the key its bundles are verified with: the server never evaluates with an unverified bundle",
			[]string{"--publish-dir", "."},
			[]string{"--publish-dir .: the server evaluates with the bundles it publishes", "--verification-key"}},
		{"a bundle URL that is a file",
			[]string{"--bundle-url", "kb.tar.gz"},
			[]string{"--bundle-url kb.tar.gz: want an http(s) URL"}},
		{"a bundle URL without a key",
			[]string{"--bundle-url", "https://bundles.example/kb.tar.gz"},
			[]string{"--bundle-url: polled bundles must be signed; pass --verification-key"}},
		{"a certificate without its key",
			[]string{"--tls-cert-file", "cert.pem"},
			[]string{"--tls-cert-file and --tls-key-file go together"}},
		{"anonymous reads with a required read credential",
			[]string{"--allow-anonymous-read", "--require-read-credential"},
			[]string{"--allow-anonymous-read and --require-read-credential contradict"}},
		{"one token as ingest and read token",
			[]string{"--ingest-token", "same-secret", "--read-token", "same-secret"},
			[]string{"--ingest-token and --read-token must differ"}},
		{"five target minors",
			[]string{"--target", "1.33,1.34,1.35,1.36,1.37"},
			[]string{"--target: at most 4 minors, got 5"}},
		{"a retention that is no duration",
			[]string{"--retention", "soon"},
			[]string{`--retention "soon"`, "90d"}},
		{"a retention of more days than a duration holds, which would wrap to seconds",
			[]string{"--retention", "213503d"},
			[]string{`--retention "213503d"`, "at most 106751d"}},
		{"a path prefix without its leading slash",
			[]string{"--path-prefix", "upgradescope"},
			[]string{`--path-prefix: path prefix "upgradescope": start it with /`}},
		{"a path prefix with a parent segment",
			[]string{"--path-prefix", "/a/../b"},
			[]string{"--path-prefix:", "letters, digits and . _ ~ - only"}},
		{"an allowed host with a port",
			[]string{"--allowed-host", "fleet.example.com:8080"},
			[]string{`--allowed-host "fleet.example.com:8080"`, "without scheme, port"}},
		{"a webhook URL that is not absolute",
			[]string{"--webhook", "hooks.example.com/T0/secret-path"},
			[]string{"--webhook:", "want an absolute http(s) URL"}},
		{"a Slack webhook URL of another scheme, shown without its path",
			[]string{"--slack-webhook", "ftp://hooks.slack.com/services/secret-path"},
			[]string{"--slack-webhook: ftp://hooks.slack.com/…: want an absolute http(s) URL"}},
		{"a webhook URL without a host",
			[]string{"--webhook", "https:///secret-path"},
			[]string{"--webhook:", "names no host"}},
		{"a re-evaluation rate of zero, which would never re-evaluate",
			[]string{"--reevaluate-rate", "0"},
			[]string{"--reevaluate-rate 0: want clusters a second, at least 1/3600"}},
		{"a re-evaluation rate so small its wait would overflow",
			[]string{"--reevaluate-rate", "1e-10"},
			[]string{"--reevaluate-rate 1e-10: want clusters a second, at least 1/3600"}},
		{"a public URL with a password, shown without it",
			[]string{"--public-url", "https://ops:secret-path@fleet.example.com"},
			[]string{"--public-url: public URL https://fleet.example.com/…: remove the user information"}},
		{"a public URL that is a host name only",
			[]string{"--public-url", "fleet.example.com"},
			[]string{`--public-url: public URL "fleet.example.com": want an absolute http or https URL`}},
		{"a public URL with a query",
			[]string{"--public-url", "https://fleet.example.com/?team=payments"},
			[]string{"--public-url:", "remove the query and the fragment"}},
		{"an audit batch bound too small for one event",
			[]string{"--max-audit-batch-bytes", "100"},
			[]string{"--max-audit-batch-bytes 100: want at least 1024"}},
		{"a webhook secret without a webhook",
			[]string{"--webhook-secret", "signing-key"},
			[]string{"--webhook-secret signs --webhook bodies: give --webhook too"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "fleet.db")
			args := append([]string{"--listen", "127.0.0.1:0", "--db", db}, tt.args...)
			code, out := runServeToExit(t, args...)
			if code != exitErr || strings.Contains(out, "listening on") {
				t.Fatalf("exit %d, want 1 before listening; output:\n%s", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "secret-path") {
				t.Errorf("output shows a webhook URL's path, which is its credential:\n%s", out)
			}
		})
	}
}

// The same non-loopback address starts once a read token guards the reads. No request is
// sent to it: the test only needs the listening line, and stops the server at once.
func TestServeStartsOnANonLoopbackAddressWithAReadToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fleet.db")
	p := startServe(t, "--db", db, "--listen", "0.0.0.0:0", "--read-token-file", writeSecret(t, t.TempDir(), "read", "read-secret"))
	p.kill()
}

// A database a newer binary migrated is refused: this binary cannot know what the newer
// schema means, and writing to it could corrupt it.
func TestServeRefusesADatabaseMigratedByANewerBinary(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fleet.db")
	mintIngestToken(t, "migrate-me", "--db", db) // creates and migrates the file
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	// schema_migrations is fleet/server/store/migrate.go's bookkeeping table.
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := runServeToExit(t, "--listen", "127.0.0.1:0", "--db", db)
	if code != exitErr || strings.Contains(out, "listening on") ||
		!strings.Contains(out, "database schema version 9999 is newer than this binary") {
		t.Errorf("exit %d, want 1 naming the schema; output:\n%s", code, out)
	}
}
