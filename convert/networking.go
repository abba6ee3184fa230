package convert

import yaml "go.yaml.in/yaml/v3"

// Ingress, IngressClass and NetworkPolicy move to networking.k8s.io/v1. An Ingress backend
// names its Service in two fields in v1beta1 and in a nested service in v1, and v1 requires
// a pathType the old versions defaulted (pkg/apis/{extensions,networking}/v1beta1).
func init() {
	register("extensions/v1beta1/Ingress", "networking.k8s.io/v1/Ingress", ingress)
	register("networking.k8s.io/v1beta1/Ingress", "networking.k8s.io/v1/Ingress", ingress)
	// v1beta1 left parameters.scope unset where v1 defaults it to Cluster, which is what
	// an unset scope meant in v1beta1 too.
	register("networking.k8s.io/v1beta1/IngressClass", "networking.k8s.io/v1/IngressClass", identical)
	// extensions/v1beta1 defaulted the protocol of ingress ports only; v1 defaults egress
	// ports to TCP as well, which is what an unset protocol meant for them.
	register("extensions/v1beta1/NetworkPolicy", "networking.k8s.io/v1/NetworkPolicy", identical)
}

func ingress(s *State) {
	spec := get(s.Obj, "spec")
	if rename(spec, "backend", "defaultBackend") {
		backend(get(spec, "defaultBackend"))
	}
	each(get(spec, "rules"), func(i int, rule *yaml.Node) {
		each(getPath(rule, "http", "paths"), func(j int, p *yaml.Node) {
			at := pointer("spec", "rules", i, "http", "paths", j)
			backend(get(p, "backend"))
			if isNull(get(p, "pathType")) { // pathType: null defaulted as an absent one
				setAfter(p, "path", "pathType", str("ImplementationSpecific"))
				s.Note(at+"/pathType", keyNode(p, "backend"), "%s defaulted pathType to ImplementationSpecific, which networking.k8s.io/v1 requires: it is written out; Prefix or Exact say what most paths mean more portably", s.From.APIVersion())
			}
		})
	})
}

// backend rewrites serviceName and servicePort as service.name and service.port.number or
// .name, as Convert_v1beta1_IngressBackend_To_networking_IngressBackend does; a resource
// backend is the same in both versions.
func backend(b *yaml.Node) {
	name, port := get(b, "serviceName"), get(b, "servicePort")
	if name == nil && port == nil {
		return
	}
	svc := mapping()
	if name != nil {
		set(svc, "name", name)
	}
	if port != nil {
		field := "name"
		if isInt(port) {
			field = "number"
		}
		k := str(field)
		// A comment on the servicePort line stays with the port.
		k.LineComment = keyNode(b, "servicePort").LineComment
		set(svc, "port", &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{k, port}})
	}
	at := keyNode(b, "serviceName")
	if at == nil {
		at = keyNode(b, "servicePort")
	}
	// service goes where serviceName was, keeping that key's comments.
	set(b, at.Value, svc)
	at.Value = "service"
	del(b, "serviceName")
	del(b, "servicePort")
}
