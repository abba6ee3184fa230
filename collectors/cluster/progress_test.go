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
		"1/15 versions done=false found=0 ", "1/15 versions done=true found=0 nodes",
		"2/15 namespaces done=false found=0 ", "2/15 namespaces done=true found=0 namespaces",
		"3/15 api-usage done=false found=0 ", "3/15 api-usage done=true found=0 objects at flagged APIs",
		"4/15 deprecated-calls done=false found=0 ", "4/15 deprecated-calls done=true found=0 deprecated APIs called",
		"5/15 disruption-budgets done=false found=0 ", "5/15 disruption-budgets done=true found=0 disruption budgets",
		"6/15 addons done=false found=0 ", "6/15 addons done=true found=0 workload images",
		"7/15 probes done=false found=0 ", "7/15 probes done=true found=0 objects examined",
		"8/15 crds done=false found=0 ", "8/15 crds done=true found=0 CRDs",
		"9/15 helm done=false found=0 ", "9/15 helm done=true found=0 Helm releases",
		"10/15 gitops done=false found=0 ", "10/15 gitops done=true found=0 Argo CD and Flux charts",
		"11/15 admission-webhooks done=false found=0 ", "11/15 admission-webhooks done=true found=0 webhook configurations",
		"12/15 api-services done=false found=0 ", "12/15 api-services done=true found=0 APIServices",
		"13/15 component-flags done=false found=0 ", "13/15 component-flags done=true found=0 components",
		"14/15 kubelet-config done=false found=0 ", "14/15 kubelet-config done=true found=0 kubelet configurations",
		"15/15 service-endpoints done=false found=0 ", "15/15 service-endpoints done=true found=0 services",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress:\n%q\nwant:\n%q", got, want)
	}
	if doc.Capabilities["versions"].Available {
		t.Errorf("versions available from a closed port: %+v", doc.Capabilities["versions"])
	}
}
