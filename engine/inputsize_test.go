package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// The built-in rules stopped at a bound blame the input, not themselves: the error names the
// lists of the inventory and the ignore rules that are large, which the user can narrow, and
// nothing when none is.
func TestTheBuiltInRulesStoppedAtABoundNameTheLargeInput(t *testing.T) {
	large := &inventory.Document{}
	for i := range 1500 {
		large.Namespaces = append(large.Namespaces, inventory.Namespace{Name: fmt.Sprintf("ns-%d", i)})
	}
	large.WorkloadImages = []inventory.WorkloadImage{{Repository: "r", Versions: make([]inventory.ImageVersion, 2500)}}
	large.APIUsage = []inventory.APIUsage{{Kind: "Ingress", Objects: make([]inventory.ObjectRef, 100)}}
	tests := []struct {
		name   string
		inv    *inventory.Document
		ignore int
		want   *LargeInput
		msg    string
	}{
		{"a large inventory and many ignore rules", large, 1200,
			&LargeInput{Inventory: []string{"2,500 image versions", "1,500 namespaces"}, IgnoreRules: 1200},
			"built-in rules: evaluation exceeded 5s over 2,500 image versions, 1,500 namespaces and 1,200 ignore rules"},
		{"many ignore rules", &inventory.Document{}, 1200, &LargeInput{IgnoreRules: 1200},
			"built-in rules: evaluation exceeded 5s over 1,200 ignore rules"},
		{"nothing large", &inventory.Document{Namespaces: make([]inventory.Namespace, 999)}, 999, nil,
			"built-in rules: evaluation exceeded 5s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := largeInput(tt.inv, tt.ignore)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("largeInput = %+v, want %+v", got, tt.want)
			}
			le := &LimitError{Limit: LimitTimeout, Bound: "5s", Input: got}
			if le.Error() != tt.msg {
				t.Errorf("Error() = %q, want %q", le.Error(), tt.msg)
			}
		})
	}
}
