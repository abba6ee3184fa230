package registry

import (
	"strings"
	"testing"
	"testing/fstest"
)

const good = `id: demo
name: Demo
match:
  images: [docker.io/demo/controller]
support:
  status: supported
  eol: unknown
  citations: [https://example.com/demo]
lines:
  - {line: "1.2", eol: "2026-01-01", kubernetes: {min: "1.28", max: "1.31"}, citations: [https://example.com/lines]}
`

func TestTheShippedRegistryValidates(t *testing.T) {
	entries, err := Load(Files)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 27 {
		t.Errorf("%d add-ons, want at least the reference's 27", len(entries))
	}
	if e := entries["ingress-nginx"]; e.Support.Status != StatusRetired || e.Support.EOL != "2026-03-24" {
		t.Errorf("ingress-nginx = %+v, want retired on 2026-03-24", e.Support)
	}
}

func TestInvalidEntriesAreRefusedNamingFileAndField(t *testing.T) {
	tests := map[string]struct{ yaml, want string }{
		"uncited support":    {strings.Replace(good, "  citations: [https://example.com/demo]\n", "  citations: []\n", 1), "demo.yaml: support.citations: at least one citation URL is required"},
		"uncited line":       {strings.Replace(good, ", citations: [https://example.com/lines]", ", citations: []", 1), "lines[0].citations: at least one citation URL is required"},
		"citation not URL":   {strings.Replace(good, "https://example.com/demo", "see the docs", 1), `support.citations[0]: "see the docs" is not an http(s) URL`},
		"bad date":           {strings.Replace(good, `eol: "2026-01-01"`, `eol: "January 2026"`, 1), `lines[0].eol: "January 2026" is not a date`},
		"guessed status":     {strings.Replace(good, "status: supported", "status: probably-fine", 1), `support.status: "probably-fine"`},
		"bad line":           {strings.Replace(good, `line: "1.2"`, `line: "v1.2.x"`, 1), `lines[0].line: "v1.2.x"`},
		"bad minor":          {strings.Replace(good, `max: "1.31"`, `max: "31"`, 1), `lines[0].kubernetes.max: "31"`},
		"unknown field":      {good + "homepage: https://example.com\n", "field homepage not found"},
		"id not file name":   {strings.Replace(good, "id: demo", "id: other", 1), `id: "other" must match the file name "demo"`},
		"nothing to match":   {strings.Replace(good, "  images: [docker.io/demo/controller]\n", "", 1), "match: at least one image"},
		"retired, no advice": {strings.Replace(good, "status: supported", "status: retired", 1), "recommendation: required for a retired add-on"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{"demo.yaml": {Data: []byte(tt.yaml)}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestTwoEntriesMayNotClaimTheSameChart(t *testing.T) {
	other := strings.Replace(good, "id: demo", "id: copy", 1)
	_, err := Load(fstest.MapFS{"demo.yaml": {Data: []byte(good)}, "copy.yaml": {Data: []byte(other)}})
	if err == nil || !strings.Contains(err.Error(), `demo.yaml: match: image "docker.io/demo/controller" is also claimed by copy`) {
		t.Errorf("Load = %v, want a conflict naming both entries", err)
	}
}

func TestProviderCalendarsLoadAndBadOnesAreRefusedNamingTheField(t *testing.T) {
	shipped, err := LoadProviders(ProviderFiles)
	if err != nil {
		t.Fatal(err)
	}
	if eks := shipped["eks"]; eks.Pricing == nil || eks.ByMinor["1.32"].StandardEnd != "2026-03-23" || len(shipped) != 3 {
		t.Errorf("shipped calendars = %v, want eks, gke and aks with EKS 1.32's dates and price", shipped)
	}
	const head = "schema_version: 1\nid: eks\ndisplay_name: Amazon EKS\nextended_support_note: n\ncitations: [https://example.com/eks]\n"
	tests := []struct {
		name, file, want string
	}{
		{"a date that is no date", head + "versions:\n  - {minor: \"1.32\", standard_end: \"March 2026\"}\n", "versions[0].standard_end"},
		{"a minor listed twice", head + "versions:\n  - {minor: \"1.32\", standard_end: \"2026-03-23\"}\n  - {minor: \"1.32\", standard_end: \"2026-03-23\"}\n", "1.32 is listed twice"},
		{"extended support ending before standard", head + "versions:\n  - {minor: \"1.32\", standard_end: \"2026-03-23\", extended_end: \"2026-01-01\"}\n", "is before standard_end"},
		{"a price without a citation", head + "pricing: {currency: USD, standard_per_cluster_hour: 0.1, extended_per_cluster_hour: 0.6, as_of: \"2026-10-03\"}\nversions: []\n", "pricing.citations"},
		{"no citation at all", "schema_version: 1\nid: eks\ndisplay_name: Amazon EKS\nversions: []\n", "citations"},
		{"an unknown field", head + "cost: 3\nversions: []\n", "cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadProviders(fstest.MapFS{"providers/eks.yaml": {Data: []byte(tt.file)}})
			if err == nil || !strings.Contains(err.Error(), "providers/eks.yaml") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming the file and %q", err, tt.want)
			}
		})
	}
}

// A matcher whose path is one segment on a registry of namespace/name repositories names an
// organisation: it claims every image the organisation publishes, its samples and other
// products included (docker.io/istio claimed Istio's bookinfo sample as Istio 1.20). Only the
// entries below may, each for its reason.
func TestNoEntryClaimsAWholeOrganisationUnlessListed(t *testing.T) {
	allowed := map[string]string{
		// Calico's organisations publish Calico's components; a component list is pending.
		"calico docker.io/calico": "pending",
		"calico quay.io/calico":   "pending",
		// Traefik's chart writes docker.io/traefik, which the rules read as path "traefik",
		// not docker.io/library/traefik: the matcher is the official image, not the organisation.
		"traefik docker.io/traefik": "official image spelt without library/",
	}
	entries, err := Load(Files)
	if err != nil {
		t.Fatal(err)
	}
	for id, e := range entries {
		for _, img := range e.Match.Images {
			host, path, _ := strings.Cut(img, "/")
			namespaced := host == "docker.io" || host == "ghcr.io" || host == "quay.io" || host == "gcr.io"
			if namespaced && !strings.Contains(path, "/") && allowed[id+" "+img] == "" {
				t.Errorf("%s.yaml: match.images %q names an organisation, not a repository: list the product's repositories", id, img)
			}
		}
	}
}
