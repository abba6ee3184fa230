package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

// soon is a context ending shortly: a turn that is not free is refused then instead of after
// slotWait.
func soon(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func TestPushTurns(t *testing.T) {
	shared := pusher{}
	cluster := func(name string) pusher { return pusher{cluster: name, tokenHash: name} }
	three := []pusher{shared, shared, shared}
	clusters := []pusher{cluster("a"), cluster("b"), cluster("c")}
	for _, tc := range []struct {
		name  string
		held  []pusher
		next  pusher
		admit bool
	}{
		{"the shared token takes every turn a fleet of it always had", three[:2], shared, true},
		{"the shared token takes no more", three, shared, false},
		{"a cluster's token pushes while the shared token holds all it may", three, cluster("a"), true},
		{"a cluster's token pushes one at a time", []pusher{cluster("a")}, cluster("a"), false},
		{"another cluster's token pushes meanwhile", []pusher{cluster("a")}, cluster("b"), true},
		{"clusters' tokens take no more than the shared token may", clusters, cluster("d"), false},
		{"the shared token pushes while clusters' tokens hold all they may", clusters, shared, true},
		{"nobody pushes past every turn", append(three, cluster("a")), cluster("b"), false},
		{"nor the shared token", append(clusters, shared), shared, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := newPushTurns()
			var releases []func()
			for _, who := range tc.held {
				release, err := turns.admit(soon(t), who)
				if err != nil {
					t.Fatalf("holding %+v: %v", who, err)
				}
				releases = append(releases, release)
			}
			release, err := turns.admit(soon(t), tc.next)
			if (err == nil) != tc.admit {
				t.Fatalf("admit %+v: %v, want admitted %v", tc.next, err, tc.admit)
			}
			if err != nil && !errors.Is(err, errBusy) && !errors.Is(err, errPushInFlight) {
				t.Errorf("a refusal is %v, want a 503 to retry", err)
			}
			if err == nil {
				release()
			}
			// Every turn given back, every credential pushes again.
			for _, r := range releases {
				r()
			}
			for _, who := range append(three, cluster("a")) {
				if _, err := turns.admit(soon(t), who); err != nil {
					t.Errorf("after every release, %+v is refused: %v", who, err)
				}
			}
		})
	}
}
