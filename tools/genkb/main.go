// Command genkb regenerates the built-in bundle's API lifecycle data from the
// APILifecycle* methods that k8s.io/api generates, plus the cited supplement for types that
// were deleted from k8s.io/api. Run it from the module root: go run ./tools/genkb.
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authenticationv1alpha1 "k8s.io/api/authentication/v1alpha1"
	authenticationv1beta1 "k8s.io/api/authentication/v1beta1"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	nodev1alpha1 "k8s.io/api/node/v1alpha1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/api/storagemigration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/upgradescope/upgradescope/kb/kbdata"
)

// addToScheme registers every group/version package of k8s.io/api. TestImportsCoverAPI
// fails when k8s.io/api gains a package this list lacks.
var addToScheme = []func(*runtime.Scheme) error{
	admissionv1.AddToScheme,
	admissionv1beta1.AddToScheme,
	admissionregistrationv1.AddToScheme,
	admissionregistrationv1alpha1.AddToScheme,
	admissionregistrationv1beta1.AddToScheme,
	apidiscoveryv2.AddToScheme,
	apidiscoveryv2beta1.AddToScheme,
	apiserverinternalv1alpha1.AddToScheme,
	appsv1.AddToScheme,
	appsv1beta1.AddToScheme,
	appsv1beta2.AddToScheme,
	authenticationv1.AddToScheme,
	authenticationv1alpha1.AddToScheme,
	authenticationv1beta1.AddToScheme,
	authorizationv1.AddToScheme,
	authorizationv1beta1.AddToScheme,
	autoscalingv1.AddToScheme,
	autoscalingv2.AddToScheme,
	batchv1.AddToScheme,
	batchv1beta1.AddToScheme,
	certificatesv1.AddToScheme,
	certificatesv1alpha1.AddToScheme,
	certificatesv1beta1.AddToScheme,
	coordinationv1.AddToScheme,
	coordinationv1alpha2.AddToScheme,
	coordinationv1beta1.AddToScheme,
	corev1.AddToScheme,
	discoveryv1.AddToScheme,
	discoveryv1beta1.AddToScheme,
	eventsv1.AddToScheme,
	eventsv1beta1.AddToScheme,
	extensionsv1beta1.AddToScheme,
	flowcontrolv1.AddToScheme,
	flowcontrolv1beta1.AddToScheme,
	flowcontrolv1beta2.AddToScheme,
	flowcontrolv1beta3.AddToScheme,
	imagepolicyv1alpha1.AddToScheme,
	lifecyclev1alpha1.AddToScheme,
	networkingv1.AddToScheme,
	networkingv1beta1.AddToScheme,
	nodev1.AddToScheme,
	nodev1alpha1.AddToScheme,
	nodev1beta1.AddToScheme,
	policyv1.AddToScheme,
	policyv1beta1.AddToScheme,
	rbacv1.AddToScheme,
	rbacv1alpha1.AddToScheme,
	rbacv1beta1.AddToScheme,
	resourcev1.AddToScheme,
	resourcev1alpha3.AddToScheme,
	resourcev1beta1.AddToScheme,
	resourcev1beta2.AddToScheme,
	schedulingv1.AddToScheme,
	schedulingv1alpha3.AddToScheme,
	schedulingv1beta1.AddToScheme,
	storagev1.AddToScheme,
	storagev1alpha1.AddToScheme,
	storagev1beta1.AddToScheme,
	storagemigrationv1.AddToScheme,
	storagemigrationv1beta1.AddToScheme,
}

//go:embed supplement.json
var supplementJSON []byte

const deprecationGuide = "https://kubernetes.io/docs/reference/using-api/deprecation-guide/"

func main() {
	out := flag.String("out", "policies/kb/upgradescope/kb", "directory that receives apis/data.json and meta/data.json")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genkb:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	apiVersion, err := moduleVersion("k8s.io/api")
	if err != nil {
		return err
	}
	apis, err := generate()
	if err != nil {
		return err
	}
	if err := mergeSupplement(apis, supplementJSON); err != nil {
		return err
	}
	if len(apis) < 150 {
		return fmt.Errorf("only %d API entries generated; refusing to write a knowledge base that small", len(apis))
	}
	meta, err := metaFor(apiVersion)
	if err != nil {
		return err
	}
	if err := kbdata.Write(filepath.Join(out, "apis", "data.json"), apis); err != nil {
		return err
	}
	if err := kbdata.Write(filepath.Join(out, "groups", "data.json"), groupsOf(apis)); err != nil {
		return err
	}
	if err := kbdata.Write(filepath.Join(out, "apiindex", "data.json"), indexOf(apis)); err != nil {
		return err
	}
	return kbdata.Write(filepath.Join(out, "meta", "data.json"), meta)
}

// moduleVersion reads the version of a dependency this binary was built with.
func moduleVersion(path string) (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build info: run genkb with go run from the module")
	}
	for _, d := range info.Deps {
		if d.Path == path {
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not a dependency of this build", path)
}

// metaFor derives the horizon from the k8s.io/api version: v0.37.x describes Kubernetes 1.37.
func metaFor(apiVersion string) (map[string]any, error) {
	var major, minor, patch int
	if _, err := fmt.Sscanf(apiVersion, "v%d.%d.%d", &major, &minor, &patch); err != nil || major != 0 || strings.Contains(apiVersion, "-") {
		return nil, fmt.Errorf("k8s.io/api %s is not a release version", apiVersion)
	}
	return map[string]any{
		"horizon":       fmt.Sprintf("1.%d", minor),
		"generatedFrom": "k8s.io/api " + apiVersion,
		"citation":      deprecationGuide,
	}, nil
}

// groupsOf lists the built-in API groups ("" is core): an object at an unknown version of one
// of them is an unknown-api finding, while CRD groups stay silent.
func groupsOf(apis map[string]entry) map[string]bool {
	groups := map[string]bool{}
	for _, e := range apis {
		groups[e.Group] = true
	}
	return groups
}

// indexOf builds the lookups rules need, so no evaluation groups the data itself:
// byResource maps "<group or core>/<version>/<resource>" to an entry key (for metric rows),
// byGroupKind maps "<group>/<Kind>" to the keys of every version of that kind; replacements
// is the replacement graph with every entry a node, as graph.reachable needs.
func indexOf(apis map[string]entry) map[string]any {
	byResource := map[string]string{}
	byGroupKind := map[string][]string{}
	replacements := map[string][]string{}
	for k, e := range apis {
		replacements[k] = []string{}
		if e.Replacement != "" {
			replacements[k] = []string{e.Replacement}
		}
		group := e.Group
		if group == "" {
			group = "core"
		}
		byResource[group+"/"+e.Version+"/"+e.Resource] = k
		gk := e.Group + "/" + e.Kind
		byGroupKind[gk] = append(byGroupKind[gk], k)
	}
	for _, ks := range byGroupKind {
		sort.Strings(ks)
	}
	return map[string]any{"byResource": byResource, "byGroupKind": byGroupKind, "replacements": replacements}
}
