package cluster

import "testing"

func TestRehearsalNamesTheArgoCDApplicationAnObjectBelongsTo(t *testing.T) {
	apps := map[string][]string{"shop": {"argocd"}, "twice": {"a", "b"}}
	cases := []struct {
		name, trackingID, instance, want string
	}{
		{"a tracking id of an Application in any namespace names it", "team_web:apps/Deployment:team/web", "", "team/web"},
		{"a tracking id of a known Application gets its namespace", "shop:/ConfigMap:shop/cm", "", "argocd/shop"},
		{"a tracking id of an unknown Application keeps its name", "gone:/ConfigMap:x/cm", "", "gone"},
		{"the instance label of a known Application names it", "", "shop", "argocd/shop"},
		{"the instance label names nothing when no Application has that name", "", "nginx", ""},
		{"the instance label names nothing when two Applications have that name", "", "twice", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := argoApplication(c.trackingID, c.instance, apps); got != c.want {
				t.Errorf("argoApplication(%q, %q) = %q, want %q", c.trackingID, c.instance, got, c.want)
			}
		})
	}
}
