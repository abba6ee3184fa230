package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/rehearsal"
	"github.com/upgradescope/upgradescope/report"
)

// rehearseFlags say which API server objects are replayed into, and within what bounds.
type rehearseFlags struct {
	kubeBinaries string
	kubeconfig   string
	timeout      time.Duration
	concurrency  int
	live         rehearseLiveFlags
}

func (f *rehearseFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeBinaries, "kube-binaries", "", "directory holding etcd and kube-apiserver of the target (setup-envtest's layout); a throwaway API server is started on loopback and stopped after")
	fl.StringVar(&f.kubeconfig, "rehearse-kubeconfig", "", "kubeconfig of a test cluster of the target to rehearse on instead (never the cluster being scanned); only the namespaces, CRDs and PriorityClasses or RuntimeClasses it lacks are created, labelled "+rehearsal.RehearsalLabel+"=true, and deleted after")
	fl.DurationVar(&f.timeout, "rehearse-timeout", rehearsal.DefaultTimeout, "time for the whole replay; objects not replayed by then make the verdict unknown")
	fl.IntVar(&f.concurrency, "rehearse-concurrency", rehearsal.DefaultConcurrency, "requests to the rehearsal's API server in flight at once")
	f.live.register(cmd)
	cmd.MarkFlagsMutuallyExclusive("kube-binaries", "rehearse-kubeconfig")
	cmd.MarkFlagsOneRequired("kube-binaries", "rehearse-kubeconfig")
}

func (f *rehearseFlags) validate() error {
	if f.timeout <= 0 {
		return fmt.Errorf("--rehearse-timeout %s: want a positive duration", f.timeout)
	}
	if f.concurrency < 1 {
		return fmt.Errorf("--rehearse-concurrency %d: want at least 1", f.concurrency)
	}
	if f.kubeBinaries != "" {
		return rehearsal.CheckBinaries(f.kubeBinaries)
	}
	return nil
}

func newRehearseCommand(s streams) *cobra.Command {
	var jf judgeFlags
	var rf rehearseFlags
	var lf liveFlags
	var fb filesBudget
	var ef excludeFlags
	var filesPath, teamLabel string
	cmd := &cobra.Command{
		Use:   "rehearse [--files PATH] --target 1.N (--kube-binaries DIR | --rehearse-kubeconfig FILE)",
		Short: "Replay the objects (converted by fix) into an API server of the target and judge what it refuses",
		Long: `rehearse collects an inventory as scan does, converts the objects at APIs the target does not
serve as fix would, and replays every object into an API server of the target with server-side
apply and dryRun=All: CRDs and namespaces first (created for real), then the rest in dependency
order. Each object the server refuses is a blocker of category rehearsal, naming its source and
the server's message; an object that could not be replayed makes the verdict unknown.`,
		Example: `  upgradescope rehearse --files ./rendered --target 1.35 --kube-binaries ~/.local/share/kubebuilder-envtest/k8s/1.35.0-linux-amd64
  upgradescope rehearse --context prod --target 1.35 --rehearse-kubeconfig ./test-cluster.kubeconfig -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimitFlag(runRehearse(cmd, s, &jf, &rf, &lf, filesPath, teamLabel, fb, &ef))
		},
	}
	jf.register(cmd)
	rf.register(cmd)
	cmd.Flags().StringVar(&filesPath, "files", "", "rendered manifests: a directory (walked) or one file")
	cmd.Flags().StringVar(&teamLabel, "team-label", "team", "Namespace label whose value names the team that owns it")
	registerFilesBudget(cmd, &fb)
	ef.register(cmd)
	lf.register(cmd)
	lf.registerTimeout(cmd)
	return cmd
}

// runRehearse collects as scan does, replays, puts the rehearsal in the inventory and judges it.
func runRehearse(cmd *cobra.Command, s streams, jf *judgeFlags, rf *rehearseFlags, lf *liveFlags, filesPath, teamLabel string, fb filesBudget, ef *excludeFlags) error {
	tuneGCForOneShot()
	j, err := jf.validate()
	if err != nil {
		return err
	}
	if len(j.targets) != 1 || jf.plan {
		return fmt.Errorf("rehearse takes one --target, the minor of the API server it rehearses on")
	}
	if err := rf.validate(); err != nil {
		return err
	}
	if filesPath != "" && (cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("context")) {
		return fmt.Errorf("--files reads manifests: --kubeconfig and --context do not apply")
	}
	if fb.exclude, err = ef.forFiles(filesPath, jf.configPath); err != nil {
		return err
	}
	// ctrl-C ends the replay and still stops the server (or cleans the test cluster).
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep := newProgress(s, jf.quiet)
	defer rep.Close()
	eng, err := jf.newEngine(ctx, rep)
	if err != nil {
		return err
	}
	doc, objs, skipped, configDirectory, err := rehearsalInputs(ctx, s, rep, eng, rf, lf, filesPath, teamLabel, fb, j)
	if err != nil {
		return err
	}
	sec, err := rehearseOn(ctx, s, rep, rf, doc, objs, skipped, j.targets[0])
	if ctx.Err() != nil && cmd.Context().Err() == nil {
		return fmt.Errorf("interrupted: the rehearsal stopped, and its API server with it (a test cluster keeps nothing of it)")
	}
	if err != nil {
		return err
	}
	doc.Rehearsal = sec
	doc.Capabilities[inventory.CapRehearsal] = rehearsal.Capability(sec)
	return jf.judge(ctx, s, rep, eng, doc, j, configDirectory)
}

// rehearsalInputs collects the inventory exactly as scan does, and the objects to replay:
// from files, each as fix converts it; from a live cluster, its full objects and Helm
// releases' manifests.
func rehearsalInputs(ctx context.Context, s streams, rep *progress.Reporter, eng *engine.Engine, rf *rehearseFlags, lf *liveFlags,
	filesPath, teamLabel string, fb filesBudget, j *judgement) (*inventory.Document, []rehearsal.Object, []rehearsal.Skipped, string, error) {
	target := j.targets[0]
	if filesPath == "" {
		doc, lt, err := lf.collectLive(ctx, s, rep, eng, teamLabel, j.now)
		if err != nil {
			return nil, nil, nil, "", err
		}
		j.kubeContext, j.apiServer = lt.context, lt.server
		rep.Start("reading the cluster's objects for the rehearsal")
		objs, skipped, err := lf.collectRehearsal(ctx, rf.live, eng.KB(), target)
		if err != nil {
			return nil, nil, nil, "", err
		}
		rep.Done(report.Count(len(objs), "object"))
		return doc, objs, skipped, ".", nil
	}
	doc, err := collectFilesWithin(s, rep, eng, filesPath, teamLabel, j.now, filesBudget{maxMiB: fb.maxMiB, timeout: lf.timeout, exclude: fb.exclude})
	if err != nil {
		return nil, nil, nil, "", err
	}
	rep.Start("converting what " + target + " does not serve")
	plan, err := fix.Scan(filesPath, fix.Options{KB: eng.KB(), Target: target, MaxBytes: int64(fb.maxMiB) << 20, KeepObjects: true, Exclude: fb.exclude})
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("convert the manifests for the rehearsal: %w", err)
	}
	objs, skipped := rehearsal.FromPlan(plan)
	rep.Done(report.Count(len(objs), "object") + " to replay")
	return doc, objs, skipped, configDir(filesPath), nil
}

// rehearseOn starts or connects to the rehearsal's API server, replays, and always stops or
// cleans it, whatever happened.
func rehearseOn(ctx context.Context, s streams, rep *progress.Reporter, rf *rehearseFlags, doc *inventory.Document,
	objs []rehearsal.Object, skipped []rehearsal.Skipped, target string) (sec *inventory.Rehearsal, err error) {
	var srv *rehearsal.Server
	if rf.kubeBinaries != "" {
		rep.Start("starting etcd and kube-apiserver from " + rf.kubeBinaries)
		srv, err = rehearsal.Start(ctx, rf.kubeBinaries)
	} else {
		rep.Start("connecting to the test cluster of " + rf.kubeconfig)
		var opts []rehearsal.ConnectOption
		if doc.Source == inventory.SourceCluster {
			opts = append(opts, rehearsal.NotCluster(doc.ClusterID))
		}
		srv, err = rehearsal.Connect(ctx, rf.kubeconfig, opts...)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := srv.Close(); cerr != nil {
			fmt.Fprintf(s.err, "warning: %v\n", cerr)
		}
	}()
	rep.Done(srv.GitVersion)
	if err := srv.CheckTarget(target); err != nil {
		return nil, err
	}
	rep.Start("replaying " + report.Count(len(objs), "object"))
	sec, err = rehearsal.Replay(ctx, srv, objs, skipped, rehearsal.Options{
		Target: target, Concurrency: rf.concurrency, Timeout: rf.timeout,
	})
	if err != nil {
		return nil, err
	}
	rep.Done(fmt.Sprintf("%d accepted, %d refused, %d not replayed", sec.Accepted,
		len(sec.Rejections)+sec.RejectionsOmitted, len(sec.NotReplayed)+sec.NotReplayedOmitted))
	return sec, nil
}
