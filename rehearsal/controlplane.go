package rehearsal

// The rehearsal's own starter of etcd and kube-apiserver, instead of controller-runtime's
// envtest. envtest links html/template (through its internal process package), and a binary
// that links html/template keeps every exported method of every type for the reflection it
// may do: with envtest, upgradescope was 116.8 MB instead of 85.0 MB (go build, linux/amd64),
// and a live scan of the test cluster peaked at 94.3 MiB instead of 84.0 MiB, a cost every
// scan paid for a command few run (cmd/upgradescope's TestTheBinaryDoesNotLinkHTMLTemplate
// keeps it out). What the rehearsal needs of envtest is short: client-go's cert and keyutil
// for the credentials, a bearer token for the admin, free ports, two processes, their
// readiness and their stop (process.go).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// controlPlane is etcd and kube-apiserver started on loopback, their data, credentials and logs
// in dir, a temporary directory removed by stop.
type controlPlane struct {
	dir             string
	etcd, apiserver *process
	stopOnce        sync.Once
	stopErr         error
	unwatch         func() bool
}

// rehearsalUser is the admin the rehearsal replays as (in system:masters, so RBAC allows all).
const rehearsalUser = "upgradescope-rehearsal"

// errPortTaken is a process that exited because another took the port it was given between
// freePorts closing it and the process binding it.
var errPortTaken = errors.New("a port was taken before the server bound it")

// startControlPlane starts etcd and kube-apiserver from bin and returns an admin's client
// configuration. It retries once with other ports when one was taken meanwhile. On an error
// nothing is left running or on disk; once started, the plane is stopped when ctx ends (ctrl-C)
// or by stop, whichever comes first.
func startControlPlane(ctx context.Context, bin string) (*controlPlane, *rest.Config, error) {
	cp, cfg, err := startControlPlaneOnce(ctx, bin)
	if errors.Is(err, errPortTaken) && ctx.Err() == nil {
		cp, cfg, err = startControlPlaneOnce(ctx, bin)
	}
	return cp, cfg, err
}

func startControlPlaneOnce(ctx context.Context, bin string) (*controlPlane, *rest.Config, error) {
	dir, err := os.MkdirTemp("", "upgradescope-rehearsal-") // 0700
	if err != nil {
		return nil, nil, fmt.Errorf("create the rehearsal's directory: %w", err)
	}
	cp := &controlPlane{dir: dir}
	cfg, err := cp.start(ctx, bin)
	if err != nil {
		_ = cp.stop()
		return nil, nil, err
	}
	cp.unwatch = context.AfterFunc(ctx, func() { _ = cp.stop() })
	return cp, cfg, nil
}

func (cp *controlPlane) start(ctx context.Context, bin string) (*rest.Config, error) {
	cfg, err := cp.writeCredentials()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if cp.etcd, err = cp.launch(bin, "etcd", etcdArgs(cp.dir, etcdURL, ports[1])); err != nil {
		return nil, err
	}
	if err := cp.etcd.waitReady(ctx, http.DefaultClient, etcdURL+"/health", `"health":"true"`); err != nil {
		return nil, err
	}
	cfg.Host = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	if cp.apiserver, err = cp.launch(bin, "kube-apiserver", apiserverArgs(cp.dir, etcdURL, ports[2])); err != nil {
		return nil, err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client of the rehearsal's API server: %w", err)
	}
	return cfg, cp.apiserver.waitReady(ctx, client, cfg.Host+"/readyz", "ok")
}

// writeCredentials writes the serving certificate (127.0.0.1 and localhost), the admin's token
// and the service-account signing key into dir, each readable by this user only, and returns
// the admin's client configuration without its Host.
func (cp *controlPlane) writeCredentials() (*rest.Config, error) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("generate the API server's certificate: %w", err)
	}
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("generate the service-account signing key: %w", err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("generate the admin's token: %w", err)
	}
	token := hex.EncodeToString(secret)
	files := map[string][]byte{
		"apiserver.crt": certPEM,
		"apiserver.key": keyPEM,
		"sa.key":        saKey,
		"tokens.csv":    fmt.Appendf(nil, "%s,%s,%s,\"system:masters\"\n", token, rehearsalUser, rehearsalUser),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(cp.dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("write the rehearsal's credentials: %w", err)
		}
	}
	// certPEM holds the serving certificate and the CA that signed it.
	return &rest.Config{BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: certPEM}, QPS: 1000, Burst: 2000}, nil
}

func etcdArgs(dir, clientURL string, peerPort int) []string {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	return []string{
		"--name=rehearsal", "--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=rehearsal=" + peerURL,
		// the data is thrown away after: no fsync, no compaction worries
		"--unsafe-no-fsync", "--log-level=warn",
	}
}

func apiserverArgs(dir, etcdURL string, port int) []string {
	in := func(name string) string { return filepath.Join(dir, name) }
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + in("pki"),
		"--tls-cert-file=" + in("apiserver.crt"), "--tls-private-key-file=" + in("apiserver.key"),
		"--token-auth-file=" + in("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + in("sa.key"), "--service-account-signing-key-file=" + in("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// no kube-controller-manager runs, so no default ServiceAccount is ever created: let Pods
		// in without one, as envtest does
		"--disable-admission-plugins=ServiceAccount",
		// the "kubernetes" Service's endpoints cannot be 127.0.0.1 (loopback is refused)
		"--endpoint-reconciler-type=none",
	}
}

// launch starts bin/name with args, its output in dir/name.log.
func (cp *controlPlane) launch(bin, name string, args []string) (*process, error) {
	p, err := startProcess(filepath.Join(bin, name), args, filepath.Join(cp.dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// close stops the plane and forgets ctx.
func (cp *controlPlane) close() error {
	cp.unwatch()
	return cp.stop()
}

// stop stops kube-apiserver, then etcd, and removes dir. It is safe to call twice and from
// several goroutines; the later calls wait for the first.
func (cp *controlPlane) stop() error {
	cp.stopOnce.Do(func() {
		for _, p := range []*process{cp.apiserver, cp.etcd} {
			if p != nil {
				p.stop()
			}
		}
		if err := os.RemoveAll(cp.dir); err != nil {
			cp.stopErr = fmt.Errorf("remove the rehearsal's directory: %w", err)
		}
	})
	return cp.stopErr
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portTaken says whether a log tail tells of a bind failure.
func portTaken(tail string) bool {
	return strings.Contains(tail, "address already in use")
}
