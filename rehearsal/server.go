package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/inventory"
)

// How a Server was reached, as inventory.Rehearsal.Server records it.
const (
	ServerBinaries   = "kube-binaries"
	ServerKubeconfig = "kubeconfig"
)

// RehearsalLabel marks what a rehearsal created on a test cluster (namespaces and CRDs that
// were missing); they are deleted when the Server closes.
const RehearsalLabel = "upgradescope.io/rehearsal"

// Server is an API server objects are replayed into: one started from binaries for the
// rehearsal, or a test cluster named by a kubeconfig. Close stops the one or removes what the
// rehearsal created on the other; it is safe to call twice.
type Server struct {
	Config *rest.Config
	// How says how it was reached: ServerBinaries or ServerKubeconfig.
	How string
	// GitVersion is what /version reports ("v1.35.4"); Minor the minor it serves as ("1.35"),
	// its emulated minor when it emulates one.
	GitVersion, Minor string

	plane   *controlPlane
	created *createdSet
}

// Start starts etcd and kube-apiserver from dir (setup-envtest's layout: dir/etcd,
// dir/kube-apiserver) with the package's own starter (controlplane.go): a serving certificate
// and an admin token of its own, free loopback ports, readiness awaited, data in a temporary
// directory removed on Close. The server is stopped, and its directory removed, on any error,
// when ctx ends (ctrl-C), or by Close, whichever comes first.
func Start(ctx context.Context, dir string) (*Server, error) {
	if err := CheckBinaries(dir); err != nil {
		return nil, err
	}
	plane, cfg, err := startControlPlane(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("start the API server from %s: %w", dir, err)
	}
	s := &Server{Config: cfg, How: ServerBinaries, plane: plane}
	if err := s.waitForDefaultNamespace(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.readVersion(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// CheckBinaries fails unless dir holds etcd and kube-apiserver, so a command can refuse a wrong
// --kube-binaries before it collects anything.
func CheckBinaries(dir string) error {
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if info, err := os.Stat(filepath.Join(dir, bin)); err != nil || info.IsDir() {
			return fmt.Errorf("--kube-binaries %s: no %s there (want the layout setup-envtest and hack/kube-env.sh install produce: DIR/etcd, DIR/kube-apiserver)", dir, bin)
		}
	}
	return nil
}

// startTimeout bounds the wait for etcd, then for kube-apiserver, to be ready.
const startTimeout = 2 * time.Minute

// waitForDefaultNamespace waits until the new server has created the default namespace, the
// last thing it does before objects can be applied to it.
func (s *Server) waitForDefaultNamespace(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(namespacesGVR).Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the rehearsal's API server did not create the default namespace: %w", err)
	}
	return nil
}

// ConnectOption configures Connect.
type ConnectOption func(*connectOptions)

type connectOptions struct {
	notClusterID string
	scanned      bool // a cluster is being scanned: NotCluster was given
}

// NotCluster makes Connect refuse the cluster whose kube-system namespace has uid (the
// inventory's ClusterID): the rehearsal never writes to the cluster being scanned. An empty
// uid (the scan could not read kube-system) refuses every cluster, since none can be told
// apart from the scanned one.
func NotCluster(uid string) ConnectOption {
	return func(o *connectOptions) { o.notClusterID, o.scanned = uid, true }
}

// Connect uses the test cluster of kubeconfig's current context. The rehearsal writes to it
// only the namespaces, CRDs and pod classes the objects need and it lacks, labelled
// RehearsalLabel, and Close deletes them; one someone else creates meanwhile is left alone.
func Connect(ctx context.Context, kubeconfig string, opts ...ConnectOption) (*Server, error) {
	var o connectOptions
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--rehearse-kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	if o.scanned && o.notClusterID == "" {
		return nil, fmt.Errorf("--rehearse-kubeconfig %s: the scan could not read the scanned cluster's kube-system namespace, so a test cluster cannot be told apart from it: rehearse with --kube-binaries, or with an identity that may read kube-system", kubeconfig)
	}
	if o.scanned {
		if err := refuseScanned(ctx, cfg, o.notClusterID); err != nil {
			return nil, fmt.Errorf("--rehearse-kubeconfig %s: %w", kubeconfig, err)
		}
	}
	s := &Server{Config: cfg, How: ServerKubeconfig, created: &createdSet{}}
	if err := s.readVersion(ctx); err != nil {
		return nil, fmt.Errorf("--rehearse-kubeconfig %s: %w", kubeconfig, err)
	}
	return s, nil
}

// refuseScanned fails when cfg reaches the cluster whose kube-system namespace has uid.
func refuseScanned(ctx context.Context, cfg *rest.Config, uid string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read its kube-system namespace to tell it from the cluster being scanned: %w", err)
	}
	if string(ns.UID) == uid {
		return errors.New("it is the cluster being scanned (same kube-system namespace UID): a rehearsal needs a test cluster of its own")
	}
	return nil
}

// readVersion fills GitVersion and Minor from /version.
func (s *Server) readVersion(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	info, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the API server's version: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := inventory.ParseVersion(info.GitVersion)
	if err != nil {
		return fmt.Errorf("the API server's version %q: %w", info.GitVersion, err)
	}
	s.GitVersion, s.Minor = info.GitVersion, v.MinorString()
	if info.EmulationMinor != "" {
		s.Minor = info.EmulationMajor + "." + info.EmulationMinor
	}
	return nil
}

// CheckTarget fails unless the server serves target's minor: a rehearsal judges objects at
// the minor of the server that read them.
func (s *Server) CheckTarget(target string) error {
	if s.Minor != target {
		return fmt.Errorf("the rehearsal's API server is %s (serving %s), not the target %s: point --kube-binaries or --rehearse-kubeconfig at a %s server", s.GitVersion, s.Minor, target, target)
	}
	return nil
}

// Close stops a started server and removes its temporary directory, or deletes what the
// rehearsal created on a test cluster.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	if s.plane != nil {
		plane := s.plane
		s.plane = nil
		if err := plane.close(); err != nil {
			return fmt.Errorf("stop the rehearsal's API server: %w", err)
		}
	}
	if s.created != nil {
		return s.created.remove(s.Config)
	}
	return nil
}
