package kubetest

import "testing"

func TestAMissingServerSkipsUnlessTheRunRequiresIt(t *testing.T) {
	tests := []struct {
		name     string
		ci       string
		require  string
		wantFail bool
	}{
		{name: "a local run skips", wantFail: false},
		{name: "CI alone skips, as in a contributor's fork", ci: "true", wantFail: false},
		{name: "UPGRADESCOPE_REQUIRE_KUBE=1 fails", require: "1", wantFail: true},
		{name: "UPGRADESCOPE_REQUIRE_KUBE=true fails, with CI set too", ci: "true", require: "true", wantFail: true},
		{name: "UPGRADESCOPE_REQUIRE_KUBE=0 skips", require: "0", wantFail: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			t.Setenv(EnvRequire, tt.require)
			fail, msg := absent(EnvServer)
			if fail != tt.wantFail {
				t.Errorf("fail = %v (%q), want %v", fail, msg, tt.wantFail)
			}
		})
	}
}
