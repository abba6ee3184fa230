package charts_test

import (
	"testing"

	"github.com/upgradescope/upgradescope/charts"
	"github.com/upgradescope/upgradescope/collectors/gitops"
)

func TestCredentialsMatchARepositoryAsTheGitOpsToolDoes(t *testing.T) {
	creds := charts.NewCredentials([]gitops.RepositoryCredential{
		{URL: "https://charts.example.com/stable", Secret: "flux-system/exact", Username: "exact"},
		{URL: "https://charts.example.com", Prefix: true, Secret: "argocd/host", Username: "host"},
		{URL: "https://charts.example.com/team", Prefix: true, Secret: "argocd/team", Username: "team"},
		{URL: "registry.example.com/charts", Secret: "argocd/oci", Username: "oci"},
		{URL: "https://private.example.com", Secret: "flux-system/gone", Unread: "credentials secret flux-system/gone not read: forbidden"},
	})
	tests := []struct{ name, repository, user, note string }{
		{"an exact URL wins over a template", "https://charts.example.com/stable/", "exact", ""},
		{"userinfo and query do not stand in the way", "https://u:p@charts.example.com/stable?x=1", "exact", ""},
		{"the longest template prefix wins", "https://charts.example.com/team/a", "team", ""},
		{"a shorter template serves the rest of its host", "https://charts.example.com/other", "host", ""},
		{"another scheme is another repository", "http://charts.example.com/stable", "", ""},
		{"an OCI repository written without oci:// matches by host and path", "oci://registry.example.com/charts", "oci", ""},
		{"a Secret not read gives no credentials, only its note", "https://private.example.com", "", "credentials secret flux-system/gone not read: forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := creds.Lookup(tt.repository)
			if ok != (tt.user != "") || c.Username != tt.user {
				t.Errorf("Lookup(%s) = %q, %v; want %q", tt.repository, c.Username, ok, tt.user)
			}
			if got := creds.Note(tt.repository); got != tt.note {
				t.Errorf("Note(%s) = %q, want %q", tt.repository, got, tt.note)
			}
		})
	}
	var none *charts.Credentials
	if _, ok := none.Lookup("https://charts.example.com"); ok {
		t.Error("nil Credentials name credentials")
	}
}
