package cluster

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Progress hears every step start and end, in order, even when every step fails: here the
// API server's port is closed.
func TestCollectReportsEachStepAsItStartsAndEnds(t *testing.T) {
	col, err := New(&rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	doc := col.Collect(context.Background(), time.Now(), Options{StepTimeout: 2 * time.Second, Progress: func(s Step) {
		got = append(got, fmt.Sprintf("%d/%d %s done=%v found=%d %s", s.Index, s.Total, s.Name, s.Done, s.Found, s.Unit))
		if s.Done && s.Name != "gitops" && s.Name != "probes" && (s.Capability == nil || s.Capability.Available || s.Capability.Reason == "") {
			t.Errorf("%s ended with capability %+v; want it unavailable with a reason", s.Name, s.Capability)
		}
	}})
	want := []string{
		"1/9 versions done=false found=0 ", "1/9 versions done=true found=0 nodes",
		"2/9 namespaces done=false found=0 ", "2/9 namespaces done=true found=0 namespaces",
		"3/9 api-usage done=false found=0 ", "3/9 api-usage done=true found=0 objects at flagged APIs",
		"4/9 deprecated-calls done=false found=0 ", "4/9 deprecated-calls done=true found=0 deprecated APIs called",
		"5/9 addons done=false found=0 ", "5/9 addons done=true found=0 workload images",
		"6/9 probes done=false found=0 ", "6/9 probes done=true found=0 objects examined",
		"7/9 crds done=false found=0 ", "7/9 crds done=true found=0 CRDs",
		"8/9 helm done=false found=0 ", "8/9 helm done=true found=0 Helm releases",
		"9/9 gitops done=false found=0 ", "9/9 gitops done=true found=0 Argo CD and Flux charts",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress:\n%q\nwant:\n%q", got, want)
	}
	if doc.Capabilities["versions"].Available {
		t.Errorf("versions available from a closed port: %+v", doc.Capabilities["versions"])
	}
}
