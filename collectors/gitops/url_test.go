package gitops

import "testing"

func TestSanitizeURL(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name, in, want string
	}{
		{"a plain https URL is kept whole", "https://charts.example.com/stable", "https://charts.example.com/stable"},
		{"userinfo is dropped", "https://user:token@host.example.com/charts", "https://host.example.com/charts"},
		{"a port survives", "https://user@host.example.com:8443/charts", "https://host.example.com:8443/charts"},
		{"a query string is dropped", "https://host.example.com/charts?token=s3cr3t", "https://host.example.com/charts"},
		{"a fragment is dropped", "https://host.example.com/charts#frag", "https://host.example.com/charts"},
		{"a git scp address loses its user", "git@github.com:org/repo.git", "github.com:org/repo.git"},
		{"a password holding a slash does not leak", "https://user:pa/ss@host.example.com/charts", "https://host.example.com/charts"},
		{"a password holding an @ does not leak", "https://user:p@ss@host.example.com/charts", "https://host.example.com/charts"},
		{"a query before the last @ empties the URL", "https://host.example.com/charts?user=ci@example.com&token=abc", ""},
		{"a fragment before the last @ empties the URL", "https://user:pa#ss@host.example.com", ""},
		{"an OCI digest survives", "oci://ghcr.io/acme/charts/app@" + digest, "oci://ghcr.io/acme/charts/app@" + digest},
		{"an OCI digest survives with userinfo cut", "oci://robot:tok@ghcr.io/acme/app@" + digest, "oci://ghcr.io/acme/app@" + digest},
		{"an @ that is no digest costs the part before it", "oci://u@ghcr.io/acme/app@sha256:abc", "oci://sha256:abc"},
		{"a token in the path cannot be told from a path", "https://dl.cloudsmith.io/T0KEN/org/repo/helm/charts/", "https://dl.cloudsmith.io/T0KEN/org/repo/helm/charts/"},
		{"an OCI URL with userinfo and a query", "oci://user:tok@registry.example.com/charts/nginx?x=1", "oci://registry.example.com/charts/nginx"},
		{"surrounding space is trimmed", "  https://host.example.com/c  ", "https://host.example.com/c"},
		{"nothing left after the @ is empty", "https://user:token@", ""},
		{"an empty URL stays empty", "", ""},
		{"a scheme inside the password does not confuse the cut", "https://a://b@host.example.com/x", "https://host.example.com/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SanitizeURL(tt.in); got != tt.want {
				t.Errorf("SanitizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestOCIChartName(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"the chart is the last path element", "oci://ghcr.io/acme/charts/ingress-nginx", "ingress-nginx"},
		{"a trailing slash is ignored", "oci://ghcr.io/acme/charts/ingress-nginx/", "ingress-nginx"},
		{"a registry host alone names no chart", "oci://ghcr.io", ""},
		{"a registry host with a port alone names no chart", "oci://registry.example.com:5000/", ""},
		{"a digest is not part of the name", "oci://ghcr.io/acme/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "app"},
		{"a tag is not part of the name", "oci://ghcr.io/acme/app:1.2.3", "app"},
		{"an https URL is no OCI source", "https://ghcr.io/acme/app", ""},
		{"the scheme is matched without case", "OCI://ghcr.io/acme/app", "app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ociChartName(tt.in); got != tt.want {
				t.Errorf("ociChartName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
