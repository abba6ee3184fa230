package files

// NodeBound is an upper bound on the YAML nodes text parses into, counted without a parse:
// a reader outside this package (Helm manifests read for a rehearsal) refuses a document past
// MaxDocumentNodes before yaml.v3 builds it.
func NodeBound(text []byte) int { return nodeBound(text) }
