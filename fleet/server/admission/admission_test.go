package admission

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
	shared := "" // the shared token has no hash
	cluster := func(name string) string { return name }
	three := []string{shared, shared, shared}
	clusters := []string{cluster("a"), cluster("b"), cluster("c")}
	for _, tc := range []struct {
		name  string
		held  []string
		next  string
		admit bool
	}{
		{"the shared token takes every turn a fleet of it always had", three[:2], shared, true},
		{"the shared token takes no more", three, shared, false},
		{"a cluster's token pushes while the shared token holds all it may", three, cluster("a"), true},
		{"a cluster's token pushes one at a time", []string{cluster("a")}, cluster("a"), false},
		{"another cluster's token pushes meanwhile", []string{cluster("a")}, cluster("b"), true},
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
					t.Fatalf("holding %q: %v", who, err)
				}
				releases = append(releases, release)
			}
			release, err := turns.admit(soon(t), tc.next)
			if (err == nil) != tc.admit {
				t.Fatalf("admit %q: %v, want admitted %v", tc.next, err, tc.admit)
			}
			if err != nil && !errors.Is(err, ErrBusy) && !errors.Is(err, ErrPushInFlight) {
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
					t.Errorf("after every release, %q is refused: %v", who, err)
				}
			}
		})
	}
}

// holdN takes n turns with take, failing the test if one is refused.
func holdN(t *testing.T, n int, take func(context.Context) (func(), error)) []func() {
	t.Helper()
	var out []func()
	for i := range n {
		release, err := take(soon(t))
		if err != nil {
			t.Fatalf("turn %d of %d: %v", i+1, n, err)
		}
		out = append(out, release)
	}
	return out
}

// TestAdmissionBounds holds each kind of work at its bound and asks for one more.
func TestAdmissionBounds(t *testing.T) {
	const budget = 1000
	for _, tc := range []struct {
		name string
		held int
		take func(a *Turns) func(context.Context) (func(), error)
		busy error
	}{
		{"evaluations: two at once", 2, func(a *Turns) func(context.Context) (func(), error) { return a.Evaluation }, ErrBusy},
		{"report reads: two at once", 2, func(a *Turns) func(context.Context) (func(), error) { return a.Report }, ErrBusy},
		{"what-ifs: one at a time", 1, func(a *Turns) func(context.Context) (func(), error) { return a.WhatIf }, ErrBusy},
		{"dry runs: one at a time", 1, func(a *Turns) func(context.Context) (func(), error) { return a.DryRun }, ErrDryRunBusy},
		{"audit batches: four at once", MaxAuditBatchesInFlight, func(a *Turns) func(context.Context) (func(), error) { return a.AuditBatch }, ErrBusy},
		{"decodes: two small ones at once, each counted as half the budget", 2, func(a *Turns) func(context.Context) (func(), error) {
			return func(ctx context.Context) (func(), error) { return a.Decode(ctx, 10) }
		}, ErrBusy},
		{"decodes: a large one alone", 1, func(a *Turns) func(context.Context) (func(), error) {
			return func(ctx context.Context) (func(), error) { return a.Decode(ctx, 10*budget) }
		}, ErrBusy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(budget)
			take := tc.take(a)
			releases := holdN(t, tc.held, take)
			if _, err := take(soon(t)); !errors.Is(err, tc.busy) {
				t.Fatalf("one past the bound: %v, want %v", err, tc.busy)
			}
			releases[0]()
			release, err := take(soon(t))
			if err != nil {
				t.Fatalf("after a release: %v", err)
			}
			release()
		})
	}
}

// TestBackgroundEvaluation: the re-evaluation takes a slot only while no push waits for
// one and a core is left to it (rule 4).
func TestBackgroundEvaluation(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		waiting, active, slots int
		takes                  bool
	}{
		{"an idle server", 0, 0, 0, true},
		{"a push in progress leaves a core", 0, 1, 0, true},
		{"a push waits for a slot", 1, 0, 0, false},
		{"as many pushes in progress as cores", 0, 2, 0, false},
		{"every slot taken", 0, 0, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(1000)
			a.cores = func() int { return 2 }
			a.evalWaiters.Store(int32(tc.waiting))
			a.pushesActive.Store(int32(tc.active))
			holdN(t, tc.slots, a.Evaluation)
			release, err := a.BackgroundEvaluation(soon(t))
			if (err == nil) != tc.takes {
				t.Fatalf("background evaluation: %v, want a slot: %v", err, tc.takes)
			}
			if err == nil {
				release()
			}
		})
	}
}

// TestPushCountsAsActive: a push counts against the background's cores until released.
func TestPushCountsAsActive(t *testing.T) {
	a := New(1000)
	release, err := a.Push(soon(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.pushesActive.Load(); got != 1 {
		t.Fatalf("pushes active %d while one is admitted, want 1", got)
	}
	release()
	if got := a.pushesActive.Load(); got != 0 {
		t.Fatalf("pushes active %d after its release, want 0", got)
	}
}

// TestWaitingPushComesFirst: a push waiting for an evaluation slot gets the next one freed,
// and the background re-evaluation does not take it meanwhile.
func TestWaitingPushComesFirst(t *testing.T) {
	a := New(1000)
	a.cores = func() int { return 8 }
	held := holdN(t, 2, a.Evaluation)
	got := make(chan error, 1)
	go func() {
		release, err := a.Evaluation(t.Context())
		if err == nil {
			defer release()
		}
		got <- err
	}()
	for a.evalWaiters.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := a.BackgroundEvaluation(soon(t)); err == nil {
		t.Fatal("the background took a slot while a push waited")
	}
	held[0]()
	if err := <-got; err != nil {
		t.Fatalf("the waiting push: %v", err)
	}
	held[1]()
}

// TestAuditBatchesTakeNoPushTurn: audit batches holding every turn of theirs leave the
// pushes' turns free (rule 8).
func TestAuditBatchesTakeNoPushTurn(t *testing.T) {
	a := New(1000)
	held := holdN(t, MaxAuditBatchesInFlight, a.AuditBatch)
	release, err := a.Push(soon(t), "")
	if err != nil {
		t.Fatalf("a push while audit batches hold all their turns: %v", err)
	}
	release()
	for _, r := range held {
		r()
	}
}
