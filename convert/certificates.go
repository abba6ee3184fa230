package convert

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// certificates.k8s.io. CertificateSigningRequest v1beta1 defaults what v1 requires: usages
// to [digital signature, key encipherment] and signerName from the request
// (pkg/apis/certificates/v1beta1/defaults.go): a kubelet's client or serving request gets the
// kubelet signers, anything else kubernetes.io/legacy-unknown, which v1 refuses to create.
// ClusterTrustBundle has the same fields in both versions; PodCertificateRequest v1 dropped
// pkixPublicKey and proofOfPossession (the key travels in stubPKCS10Request).

const certificatesV1beta1, certificatesV1 = "certificates.k8s.io/v1beta1/", "certificates.k8s.io/v1/"

func init() {
	register(certificatesV1beta1+"CertificateSigningRequest", certificatesV1+"CertificateSigningRequest", csrToV1)
	register(certificatesV1beta1+"ClusterTrustBundle", certificatesV1+"ClusterTrustBundle", identical)
	register(certificatesV1beta1+"PodCertificateRequest", certificatesV1+"PodCertificateRequest", podCertificateRequestToV1)
}

const (
	signerKubeletClient  = "kubernetes.io/kube-apiserver-client-kubelet"
	signerKubeletServing = "kubernetes.io/kubelet-serving"
	signerLegacyUnknown  = "kubernetes.io/legacy-unknown"
)

func csrToV1(s *State) {
	spec := get(s.Obj, "spec")
	usages := get(spec, "usages")
	if isNull(usages) {
		usages = strs("digital signature", "key encipherment")
		setAfter(spec, "request", "usages", usages)
		s.Note("/spec/usages", keyNode(spec, "request"), "usages written as v1beta1's default [digital signature, key encipherment]: v1 requires them")
	}
	if signer := get(spec, "signerName"); !isNull(signer) {
		if signer.Value == signerLegacyUnknown {
			s.Manual("/spec/signerName", signer, "signerName %s is refused by v1: choose the signer that should sign this request", signerLegacyUnknown)
		}
		return
	}
	switch signer := defaultSigner(scalarAt(spec, "request"), usages); signer {
	case signerLegacyUnknown:
		s.Manual("/spec/signerName", spec, "signerName unset means %s in v1beta1 for this request, which v1 refuses: choose the signer that should sign it", signerLegacyUnknown)
	default:
		setAfter(spec, "request", "signerName", str(signer))
		s.Note("/spec/signerName", keyNode(spec, "request"), "signerName written as %s, which v1beta1 derives from this kubelet request: v1 requires it", signer)
	}
}

// defaultSigner is the signer v1beta1 defaults for a request (base64 of a PEM CSR) and its
// usages, as DefaultSignerNameFromSpec does.
func defaultSigner(request string, usages *yaml.Node) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(request))
	if err != nil {
		return signerLegacyUnknown
	}
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return signerLegacyUnknown
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil || !reflect.DeepEqual(csr.Subject.Organization, []string{"system:nodes"}) ||
		!strings.HasPrefix(csr.Subject.CommonName, "system:node:") || len(csr.EmailAddresses) > 0 || len(csr.URIs) > 0 {
		return signerLegacyUnknown
	}
	var set []string
	each(usages, func(_ int, u *yaml.Node) { set = append(set, u.Value) })
	slices.Sort(set)
	set = slices.Compact(set)
	switch {
	case len(csr.DNSNames) == 0 && len(csr.IPAddresses) == 0 && usagesAre(set, "client auth"):
		return signerKubeletClient
	case (len(csr.DNSNames) > 0 || len(csr.IPAddresses) > 0) && usagesAre(set, "server auth"):
		return signerKubeletServing
	}
	return signerLegacyUnknown
}

// usagesAre says whether set (sorted, unique) is the kubelet's usages for purpose: digital
// signature and purpose, with or without key encipherment.
func usagesAre(set []string, purpose string) bool {
	with := []string{purpose, "digital signature", "key encipherment"}
	without := []string{purpose, "digital signature"}
	slices.Sort(with)
	slices.Sort(without)
	return slices.Equal(set, with) || slices.Equal(set, without)
}

func podCertificateRequestToV1(s *State) {
	spec := get(s.Obj, "spec")
	for _, field := range []string{"pkixPublicKey", "proofOfPossession"} {
		if v := get(spec, field); !isNull(v) {
			s.Manual("/spec/"+field, keyNode(spec, field), "%s is not in v1, which takes the public key and its proof from stubPKCS10Request: the kubelet recreates pod certificate requests", field)
		}
	}
}
