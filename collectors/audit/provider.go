package audit

import "errors"

// errNotProvider says a record is not in a managed provider's export shape.
var errNotProvider = errors.New("not a managed provider's audit record")

// provider turns one record of a managed provider's audit export (EKS, GKE, AKS) into the
// events it holds, naming its format.
func provider(raw []byte, emit func(*Event)) (format string, err error) {
	return "", errNotProvider
}
