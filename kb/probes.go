package kb

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/upgradescope/upgradescope/kb/probe"
)

// DecodeProbes decodes and validates a list of probe declarations found at pointer in the
// data of the bundle origin names: the knowledge base's at /upgradescope/kb/probes, a custom
// pack's at /upgradescope/custom/<name>/observe/probes. nil (none declared) is no probes.
// A malformed declaration is refused with the bundle and the JSON pointer of the probe.
func DecodeProbes(v any, origin, pointer string) ([]probe.Spec, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("bundle %s: %s must be a list of probes", origin, pointer)
	}
	specs := make([]probe.Spec, len(list))
	for i, item := range list {
		if err := strictRemarshal(item, &specs[i]); err != nil {
			return nil, fmt.Errorf("bundle %s: %s/%d: %w", origin, pointer, i, err)
		}
		if err := probe.Validate(specs[i]); err != nil {
			return nil, fmt.Errorf("bundle %s: %s/%d: %w", origin, pointer, i, err)
		}
	}
	return specs, nil
}

// strictRemarshal decodes in into out through JSON, refusing fields out does not have: a
// misspelt "podTemplat" would otherwise declare a probe of nothing.
func strictRemarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}
