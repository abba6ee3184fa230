package convert_test

import "testing"

func TestEndpointSlicesMoveToDiscoveryV1(t *testing.T) {
	slice := "apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: a}\naddressType: IPv4\nendpoints:\n  - addresses: [10.0.0.1]\n"
	runSteps(t, []stepCase{
		{
			name:   "the zone label becomes zone and a hostname equal to nodeName goes",
			in:     slice + "    nodeName: n1\n    topology: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: z1}",
			want:   []string{"nodeName: n1\n    zone: z1\n"},
			absent: []string{"topology", "hostname"},
		},
		{
			name: "a hostname without nodeName stays in deprecatedTopology, as the server keeps it",
			in:   slice + "    topology: {kubernetes.io/hostname: n1, rack: r1}",
			want: []string{"deprecatedTopology:\n      kubernetes.io/hostname: n1\n      rack: r1"}, absent: []string{"nodeName"},
		},
		{
			name: "an endpoint without topology is kept as it is",
			in:   slice,
			want: []string{"- addresses:\n      - 10.0.0.1\n"}, absent: []string{"zone", "deprecatedTopology"},
		},
	})
}
