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
	shared, prod, staging := pusher{}, pusher{cluster: "prod", tokenHash: "p"}, pusher{cluster: "staging", tokenHash: "s"}
	for _, tc := range []struct {
		name  string
		held  []pusher
		next  pusher
		admit bool
	}{
		{"the shared token takes turns up to its own bound", []pusher{shared}, shared, true},
		{"the shared token never takes every turn", []pusher{shared, shared}, shared, false},
		{"a cluster's token pushes while the shared token holds all it may", []pusher{shared, shared}, prod, true},
		{"a cluster's token pushes one at a time", []pusher{prod}, prod, false},
		{"another cluster's token pushes meanwhile", []pusher{prod}, staging, true},
		{"nobody pushes past every turn", []pusher{shared, prod, staging}, shared, false},
		{"no cluster pushes past every turn", []pusher{shared, shared, prod}, staging, false},
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
			for _, who := range []pusher{shared, shared, prod} {
				if _, err := turns.admit(soon(t), who); err != nil {
					t.Errorf("after every release, %+v is refused: %v", who, err)
				}
			}
		})
	}
}
