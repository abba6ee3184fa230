package convert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
)

// csrRequest is a base64 PEM certificate request for the subject and DNS names.
func csrRequest(t *testing.T, subject pkix.Name, dns ...string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func TestCertificateSigningRequestsGetTheSignerV1beta1Derived(t *testing.T) {
	kubelet := pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}}
	client, serving := csrRequest(t, kubelet), csrRequest(t, kubelet, "worker-1.example.com")
	other := csrRequest(t, pkix.Name{CommonName: "alice"})
	csr := func(request, rest string) string {
		return "apiVersion: certificates.k8s.io/v1beta1\nkind: CertificateSigningRequest\nmetadata:\n  name: convert-fixtures\nspec:\n  request: " + request + "\n" + rest
	}
	v1 := func(src string) string {
		return strings.Replace(src, "certificates.k8s.io/v1beta1", "certificates.k8s.io/v1", 1)
	}
	runStepCases(t, []stepCase{
		{name: "a kubelet client request gets the kubelet client signer",
			in:    csr(client, "  usages: [digital signature, client auth]\n"),
			want:  v1(csr(client, "  signerName: kubernetes.io/kube-apiserver-client-kubelet\n  usages: [digital signature, client auth]\n")),
			notes: []string{"signerName written as kubernetes.io/kube-apiserver-client-kubelet"}},
		{name: "a kubelet serving request gets the kubelet serving signer",
			in:    csr(serving, "  usages: [digital signature, key encipherment, server auth]\n"),
			want:  v1(csr(serving, "  signerName: kubernetes.io/kubelet-serving\n  usages: [digital signature, key encipherment, server auth]\n")),
			notes: []string{"kubernetes.io/kubelet-serving"}},
		{name: "a request with a signer gets its default usages written",
			in:    csr(other, "  signerName: example.com/signer\n"),
			want:  v1(csr(other, "  usages:\n    - digital signature\n    - key encipherment\n  signerName: example.com/signer\n")),
			notes: []string{"usages written as v1beta1's default"}},
		{name: "any other request without a signer needs a person",
			in:     csr(other, "  usages: [client auth]\n"),
			manual: []string{"signerName unset means kubernetes.io/legacy-unknown"}},
		{name: "the legacy signer needs a person",
			in:     csr(other, "  signerName: kubernetes.io/legacy-unknown\n  usages: [client auth]\n"),
			manual: []string{"signerName kubernetes.io/legacy-unknown is refused by v1"}},
	})
}

func TestPodCertificateRequestsWithARawKeyNeedAPerson(t *testing.T) {
	runStepCases(t, []stepCase{{name: "pkixPublicKey is not in v1", target: "1.40", in: `
apiVersion: certificates.k8s.io/v1beta1
kind: PodCertificateRequest
metadata:
  name: convert-fixtures
spec:
  signerName: example.com/pods
  pkixPublicKey: AAAA
  proofOfPossession: BBBB
`, manual: []string{"pkixPublicKey is not in v1", "proofOfPossession is not in v1"}}})
}
