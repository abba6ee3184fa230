package probe

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Values of Spec.StrictInvalid: the formats whose strict validation a probe can narrow to.
const (
	// StrictIP is an IP address field validated as Kubernetes' legacy IP fields are
	// (Service externalIPs, a Pod's dnsConfig nameservers).
	StrictIP = "ip"
	// StrictCIDR is a CIDR field validated as Kubernetes' legacy CIDR fields are
	// (a NetworkPolicy ipBlock, Service loadBalancerSourceRanges).
	StrictCIDR = "cidr"
)

// strictPath names the field in the validators' errors, which strictInvalid drops.
var strictPath = field.NewPath("value")

// strictInvalid says whether value, with surrounding white space dropped, is an IP (format
// StrictIP) or a CIDR (StrictCIDR) that Kubernetes' legacy validation accepts and its strict
// validation refuses: what the StrictIPCIDRValidation feature (KEP-4858) newly refuses. It
// asks apimachinery's own validators, the ones kube-apiserver calls for these fields, both
// ways. A value neither accepts is not one the feature changes anything for.
func strictInvalid(format, value string) bool {
	v := strings.TrimSpace(value)
	switch format {
	case StrictIP:
		return len(validation.IsValidIPForLegacyField(strictPath, v, false, nil)) == 0 &&
			len(validation.IsValidIPForLegacyField(strictPath, v, true, nil)) > 0
	case StrictCIDR:
		return len(validation.IsValidCIDRForLegacyField(strictPath, v, false, nil)) == 0 &&
			len(validation.IsValidCIDRForLegacyField(strictPath, v, true, nil)) > 0
	}
	return false
}
