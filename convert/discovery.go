package convert

import yaml "go.yaml.in/yaml/v3"

// discovery.k8s.io/v1beta1 EndpointSlice endpoints carry a topology map; v1 has a zone field
// and a deprecatedTopology map. Convert_v1beta1_Endpoint_To_discovery_Endpoint moves the zone
// label to zone, drops the hostname label when it equals nodeName, and keeps the rest as
// deprecatedTopology.
func init() {
	register("discovery.k8s.io/v1beta1/EndpointSlice", "discovery.k8s.io/v1/EndpointSlice", endpointSlice)
}

const (
	labelZone     = "topology.kubernetes.io/zone"
	labelHostname = "kubernetes.io/hostname"
)

func endpointSlice(s *State) {
	each(get(s.Obj, "endpoints"), func(_ int, ep *yaml.Node) {
		topo := get(ep, "topology")
		if topo == nil {
			return
		}
		rename(ep, "topology", "deprecatedTopology")
		if zone := del(topo, labelZone); zone != nil && get(ep, "zone") == nil {
			setAfter(ep, "nodeName", "zone", zone)
		}
		if h := get(topo, labelHostname); h != nil && get(ep, "nodeName") != nil && scalarAt(ep, "nodeName") == h.Value {
			del(topo, labelHostname)
		}
		if isEmpty(topo) {
			del(ep, "deprecatedTopology")
		}
	})
}
