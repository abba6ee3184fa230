package repo_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

// serveBigIndex serves an index of 5,000 versions of "big", in shuffled order, beside 500
// versions each of two other charts, and returns big's versions as they sort ascending.
func serveBigIndex(t testing.TB) (*charttest.Repo, []string) {
	t.Helper()
	srv := charttest.ServeIndex(t)
	var sorted []string
	for major := range 5 {
		for minor := range 50 {
			for patch := range 20 {
				sorted = append(sorted, fmt.Sprintf("%d.%d.%d", major, minor, patch))
			}
		}
	}
	shuffled := append([]string(nil), sorted...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	idx := repov1.NewIndexFile()
	add := func(name, version string) {
		md := &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: name, Version: version,
			AppVersion: "v" + version, KubeVersion: ">=1.25.0-0"}
		file := name + "-" + version + ".tgz"
		if err := idx.MustAdd(md, file, srv.URL, "sha256:0000000000000000000000000000000000000000000000000000000000000000"); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range shuffled {
		add("big", v)
	}
	for i := range 500 {
		add("other-a", fmt.Sprintf("1.0.%d", i))
		add("other-b", fmt.Sprintf("2.%d.0", i))
	}
	writeIndex(t, srv, idx)
	return srv, sorted
}

func TestA5000EntryIndexIsReadAndSorted(t *testing.T) {
	srv, want := serveBigIndex(t)
	vs, err := newReader(t, repo.Options{}).Versions(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if got := versionStrings(vs); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d versions, want the 5,000 ascending (first %v, last %v)", len(got), want[:3], want[len(want)-3:])
	}
	if last := vs[len(vs)-1]; last.AppVersion != "v4.49.19" || last.KubeVersion != ">=1.25.0-0" || !last.Known {
		t.Errorf("last version = %+v", last)
	}
}

// BenchmarkVersionsFrom5000EntryIndex reads the versions of one chart from an index of
// 5,000 of its versions and 1,000 others :
//   - cold: a new Reader downloads the index over loopback, caches and parses it;
//   - warm: a new offline Reader parses the cached index;
//   - memoised: the same Reader again, as the advisor's second release of that chart.
//
// Last measured (2 cores, go1.26, while other helpers built):
//
//	cold      ~370 ms/op  113 MB/op  1.37 M allocs/op
//	warm      ~310 ms/op  110 MB/op  1.37 M allocs/op (almost all Helm's strict YAML parse)
//	memoised  ~0.27 ms/op 0.29 MB/op 4 allocs/op (a copy of the sorted list)
func BenchmarkVersionsFrom5000EntryIndex(b *testing.B) {
	srv, _ := serveBigIndex(b)
	ref := repo.Ref{Repository: srv.URL, Chart: "big"}
	cache := b.TempDir()
	ctx := ctxFor(b)
	read := func(b *testing.B, r *repo.Reader) {
		if vs, err := r.Versions(ctx, ref); err != nil || len(vs) != 5000 {
			b.Fatalf("%d versions, %v", len(vs), err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			read(b, newReader(b, repo.Options{CacheDir: cache}))
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			read(b, newReader(b, repo.Options{CacheDir: cache, Offline: true}))
		}
	})
	b.Run("memoised", func(b *testing.B) {
		r := newReader(b, repo.Options{CacheDir: cache})
		read(b, r)
		b.ReportAllocs()
		for b.Loop() {
			read(b, r)
		}
	})
}
