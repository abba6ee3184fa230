package report

import "testing"

func TestAChartFixReadsAsOneLine(t *testing.T) {
	tests := []struct {
		name string
		fix  ChartFix
		want string
	}{
		{"an upgrade names both versions, what changes and the version for every hop",
			ChartFix{Chart: "shop", From: "1.4.0", To: "1.6.0", FromAppVersion: "2.3.1", ToAppVersion: "2.5.0",
				APIsAdded: []string{"policy/v1 PodDisruptionBudget"}, APIsRemoved: []string{"policy/v1beta1 PodDisruptionBudget"},
				EveryHop: "1.7.0", Status: ChartFixUpgrade},
			"upgrade chart shop 1.4.0 → 1.6.0 (appVersion 2.3.1 → 2.5.0; APIs: +policy/v1 PodDisruptionBudget, −policy/v1beta1 PodDisruptionBudget); every hop: 1.7.0"},
		{"an upgrade past a lower version that could not be judged says so",
			ChartFix{Chart: "shop", From: "1.4.0", To: "1.6.0", Status: ChartFixUpgrade, Reason: "1.5.0 could not be judged: digest mismatch"},
			"upgrade chart shop 1.4.0 → 1.6.0; 1.5.0 could not be judged: digest mismatch"},
		{"an upgrade that changes nothing listed names the versions alone",
			ChartFix{Chart: "shop", From: "1.4.0", To: "1.4.1", Status: ChartFixUpgrade},
			"upgrade chart shop 1.4.0 → 1.4.1"},
		{"no version says how many were judged",
			ChartFix{Chart: "shop", From: "1.4.0", Status: ChartFixNone, Reason: "none of the 2 later versions judged supports 1.36"},
			"no version of shop judged works at 1.36 (none of the 2 later versions judged supports 1.36)"},
		{"no version claims only the versions judged when some were not",
			ChartFix{Chart: "shop", From: "1.4.0", Status: ChartFixNone, Reason: "49 were judged, 12 more were not judged"},
			"no version of shop judged works at 1.36 (49 were judged, 12 more were not judged)"},
		{"an unread repository says why",
			ChartFix{Chart: "shop", From: "1.4.0", Status: ChartFixUnread, Reason: "offline: not in the cache"},
			"repository not read: offline: not in the cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fix.Summary("1.36"); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
