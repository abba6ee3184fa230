package advisor_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/charts/advisor"
	"github.com/upgradescope/upgradescope/inventory"
)

// hostileAdvice is what an advisor could record for n releases of a chart whose repository
// offers 50 versions rendering 200 APIs each, all blocked, with strings past every bound.
func hostileAdvice(n int) []inventory.ChartAdvice {
	long := strings.Repeat("x", inventory.MaxStringLength+10)
	var out []inventory.ChartAdvice
	for i := 0; i < n; i++ {
		a := inventory.ChartAdvice{Source: inventory.ChartSourceHelm, Namespace: fmt.Sprintf("ns-%04d", i), Name: "web",
			Chart: "web", Installed: "1.0.0", Read: true, Reason: long, Targets: []string{"1.36"}}
		for v := 0; v < inventory.MaxChartVersionsJudged; v++ {
			var apis, keys []string
			for k := 0; k < inventory.MaxChartVersionAPIs; k++ { // 200 keys too, past MaxBlockKeys
				apis = append(apis, fmt.Sprintf("example.com/v%d Kind%d", v, k))
				keys = append(keys, fmt.Sprintf("removed-api/example.com/v%d/Kind%d", v, k))
			}
			a.Versions = append(a.Versions, inventory.ChartVersionJudged{Version: fmt.Sprintf("1.%d.0", v), AppVersion: long,
				APIs: apis, Blocks: map[string][]string{"1.36": keys}})
		}
		out = append(out, a)
	}
	return out
}

func TestBoundAdviceIsAnInventoryTheSchemaAccepts(t *testing.T) {
	for _, n := range []int{1, 20, 200} {
		t.Run(fmt.Sprintf("%d releases", n), func(t *testing.T) {
			kept, omitted := advisor.Bound(hostileAdvice(n))
			if len(kept)+omitted != n {
				t.Fatalf("kept %d and omitted %d of %d", len(kept), omitted, n)
			}
			if len(kept) == 0 {
				t.Fatal("nothing kept")
			}
			doc := inventory.Document{SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceCluster,
				Capabilities: map[string]inventory.Capability{}, APIUsage: []inventory.APIUsage{}, ChartAdvice: kept, ChartAdviceOmitted: omitted}
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := inventory.Validate(data); err != nil {
				t.Fatalf("the schema refuses the bounded advice: %v", err)
			}
		})
	}
}

func TestBoundKeepsTheAPIsAFixIsMadeOf(t *testing.T) {
	a := hostileAdvice(60)
	for i := range a {
		a[i].Versions[len(a[i].Versions)-1].Blocks = nil // the fix
	}
	kept, _ := advisor.Bound(a)
	for _, k := range kept {
		if len(k.Versions[0].APIs) == 0 || len(k.Versions[len(k.Versions)-1].APIs) == 0 {
			t.Fatalf("%s: the installed version's or the fix's APIs were dropped", k.Namespace)
		}
	}
}
