package gitops

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgradescope/upgradescope/inventory"
)

// RepositoryCredential is what one Secret a GitOps tool reads a chart repository with says:
// held in memory for one run, handed to the chart advisor's repository reader, and never
// stored, logged or reported. Only Secret (its namespace/name) may appear in a reason.
type RepositoryCredential struct {
	// URL is the repository URL the Secret is for, as the object writes it (an Argo CD OCI
	// repository often without oci://). Prefix says it is an Argo CD credential template
	// (repo-creds), which serves every repository whose URL starts with URL.
	URL    string
	Prefix bool
	// Secret is "namespace/name" of the Secret read.
	Secret string
	// Unread, when set, says why the Secret was not read ("credentials secret ns/name not
	// read: forbidden"); the fields below are then empty.
	Unread string

	Username, Password     string
	CertPEM, KeyPEM, CAPEM []byte
	Insecure               bool
	// PassCredentials sends basic auth to hosts other than the repository's (Flux
	// spec.passCredentials).
	PassCredentials bool
}

// fluxAuth is what a Flux HelmRepository names for its authentication: spec.secretRef and
// spec.certSecretRef, both in the HelmRepository's namespace, and spec.passCredentials.
type fluxAuth struct {
	secretRef, certSecretRef string
	passCredentials          bool
}

func helmRepositoryAuth(u *unstructured.Unstructured) fluxAuth {
	var a fluxAuth
	if name, _, _ := unstructured.NestedString(u.Object, "spec", "secretRef", "name"); name != "" {
		a.secretRef = u.GetNamespace() + "/" + name
	}
	if name, _, _ := unstructured.NestedString(u.Object, "spec", "certSecretRef", "name"); name != "" {
		a.certSecretRef = u.GetNamespace() + "/" + name
	}
	a.passCredentials, _, _ = unstructured.NestedBool(u.Object, "spec", "passCredentials")
	return a
}

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// ReadCredentials reads the Secrets the GitOps charts' repositories are read with, live:
// each Flux HelmRepository's secretRef and certSecretRef (ResolveHelmRepositories noted
// them), and Argo CD's repository and repo-creds Secrets, one labelled list per namespace
// holding Applications. A Secret that cannot be read is an entry saying so, never an error.
func (r *Reader) ReadCredentials(ctx context.Context, charts []inventory.GitopsChart, values map[string]ChartValues) []RepositoryCredential {
	out := r.fluxCredentials(ctx, values)
	return append(out, r.argoCredentials(ctx, charts)...)
}

func (r *Reader) fluxCredentials(ctx context.Context, values map[string]ChartValues) []RepositoryCredential {
	seen := map[string]bool{}
	var out []RepositoryCredential
	for _, key := range sortedValueKeys(values) {
		v := values[key]
		a := v.auth
		if v.RepoURL == "" || (a.secretRef == "" && a.certSecretRef == "") || seen[v.HelmRepository] {
			continue
		}
		seen[v.HelmRepository] = true
		out = append(out, r.fluxCredential(ctx, v.RepoURL, a))
	}
	return out
}

// fluxCredential reads a HelmRepository's Secrets. Source-controller reads username and
// password from secretRef, and TLS from certSecretRef's tls.crt, tls.key and ca.crt; the
// certFile, keyFile and caFile keys in secretRef are the older form it still reads
// (https://fluxcd.io/flux/components/source/helmrepositories/, fluxcd/source-controller#1131
// and #1194).
func (r *Reader) fluxCredential(ctx context.Context, url string, a fluxAuth) RepositoryCredential {
	c := RepositoryCredential{URL: url, Secret: a.secretRef, PassCredentials: a.passCredentials}
	if a.secretRef != "" {
		data, err := r.secretData(ctx, a.secretRef)
		if err != nil {
			return RepositoryCredential{URL: url, Secret: a.secretRef, Unread: unreadNote(a.secretRef, err)}
		}
		c.Username, c.Password = string(data["username"]), string(data["password"])
		c.CertPEM, c.KeyPEM, c.CAPEM = data["certFile"], data["keyFile"], data["caFile"]
	}
	if a.certSecretRef != "" {
		data, err := r.secretData(ctx, a.certSecretRef)
		if err != nil {
			return RepositoryCredential{URL: url, Secret: a.certSecretRef, Unread: unreadNote(a.certSecretRef, err)}
		}
		c.CertPEM, c.KeyPEM, c.CAPEM = data["tls.crt"], data["tls.key"], data["ca.crt"]
		if c.Secret == "" {
			c.Secret = a.certSecretRef
		}
	}
	return c
}

// Argo CD's repository Secrets carry this label: "repository" for one repository (exact
// url), "repo-creds" for a credential template matched by URL prefix, the longest winning
// (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/#repositories
// and #repository-credentials).
const argoSecretType = "argocd.argoproj.io/secret-type"

// argoCredentials lists the repository Secrets of each namespace holding Applications.
func (r *Reader) argoCredentials(ctx context.Context, charts []inventory.GitopsChart) []RepositoryCredential {
	urls := map[string][]string{} // namespace → repository URLs of its Applications' charts
	for _, c := range charts {
		if c.Tool == inventory.ToolArgoCD && c.RepoURL != "" {
			urls[c.Namespace] = append(urls[c.Namespace], c.RepoURL)
		}
	}
	var out []RepositoryCredential
	sel := argoSecretType + " in (repository,repo-creds)"
	for _, ns := range sortedKeys(urls) {
		var found []RepositoryCredential
		err := r.listSelected(ctx, secrets, ns, sel, func(u *unstructured.Unstructured) {
			if c, ok := argoCredential(u); ok {
				found = append(found, c)
			}
		})
		if err != nil {
			// Which Secret would have served is unknown: every chart of the namespace hears why.
			for _, url := range urls[ns] {
				out = append(out, RepositoryCredential{URL: url,
					Unread: fmt.Sprintf("Argo CD repository secrets in %s not listed: %s", ns, reasonOf(err))})
			}
			continue
		}
		out = append(out, found...)
	}
	return out
}

// argoCredential reads one Argo CD repository Secret: url, username, password,
// tlsClientCertData, tlsClientCertKey and insecure. A Secret for a Git repository
// (type git, or none: Argo CD's default) is of no use to a chart read and is left out.
func argoCredential(u *unstructured.Unstructured) (RepositoryCredential, bool) {
	data := decodeData(u)
	url := strings.TrimSpace(string(data["url"]))
	kind := string(data["type"])
	if url == "" || (kind != "helm" && kind != "oci") {
		return RepositoryCredential{}, false
	}
	if string(data["enableOCI"]) == "true" && !strings.Contains(url, "://") {
		url = "oci://" + url
	}
	return RepositoryCredential{
		URL: url, Prefix: u.GetLabels()[argoSecretType] == "repo-creds",
		Secret:   u.GetNamespace() + "/" + u.GetName(),
		Username: string(data["username"]), Password: string(data["password"]),
		CertPEM: data["tlsClientCertData"], KeyPEM: data["tlsClientCertKey"],
		Insecure: string(data["insecure"]) == "true",
	}, true
}

// secretData gets one Secret ("namespace/name") and decodes its data.
func (r *Reader) secretData(ctx context.Context, key string) (map[string][]byte, error) {
	ns, name, _ := strings.Cut(key, "/")
	r.Requests++
	u, err := r.dynamic.Resource(secrets).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return decodeData(u), nil
}

// decodeData is a Secret's data, base64-decoded as the API serves it; a key that does not
// decode is left out.
func decodeData(u *unstructured.Unstructured) map[string][]byte {
	raw, _, _ := unstructured.NestedStringMap(u.Object, "data")
	out := make(map[string][]byte, len(raw))
	for k, v := range raw {
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			out[k] = b
		}
	}
	return out
}

// unreadNote words a Secret that could not be read by its name and the API's reason alone:
// the API's message is left out, as it is of no use here.
func unreadNote(secret string, err error) string {
	return fmt.Sprintf("credentials secret %s not read: %s", secret, reasonOf(err))
}

func reasonOf(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsNotFound(err):
		return "not found"
	}
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return strings.ToLower(string(reason))
	}
	return "unreadable"
}

func sortedValueKeys(m map[string]ChartValues) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
