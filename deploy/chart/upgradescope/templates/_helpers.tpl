{{- define "upgradescope.name" -}}{{ .Release.Name }}-agent{{- end -}}
{{- define "upgradescope.serverName" -}}{{ .Release.Name }}-server{{- end -}}

{{- define "upgradescope.labels" -}}
app.kubernetes.io/name: upgradescope
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component (agent or server): never change across upgrades. */}}
{{- define "upgradescope.selector" -}}
app.kubernetes.io/name: upgradescope
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "upgradescope.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The Secret holding the server's tokens: the user's, or the chart's. */}}
{{- define "upgradescope.tokenSecret" -}}
{{- .Values.server.existingSecret | default (printf "%s-tokens" (include "upgradescope.serverName" .)) -}}
{{- end -}}

{{/* Key of a token in the token Secret; empty when there is none. */}}
{{- define "upgradescope.tokenKey" -}}
{{- $v := .root.Values.server -}}
{{- if $v.existingSecret -}}
{{- index $v.existingSecretKeys .token -}}
{{- else if index $v .token -}}
{{- .token -}}
{{- end -}}
{{- end -}}

{{- define "upgradescope.serverTLS" -}}
{{- if or .Values.server.tls.secretName .Values.server.tls.certManager.enabled -}}true{{- end -}}
{{- end -}}

{{- define "upgradescope.serverTLSSecret" -}}
{{- .Values.server.tls.secretName | default (printf "%s-https" (include "upgradescope.serverName" .)) -}}
{{- end -}}

{{/* Where the in-cluster agent pushes: the server's Service DNS name. */}}
{{- define "upgradescope.serverURL" -}}
{{- $scheme := ternary "https" "http" (eq (include "upgradescope.serverTLS" .) "true") -}}
{{ $scheme }}://{{ include "upgradescope.serverName" . }}.{{ .Release.Namespace }}.svc.{{ .Values.clusterDomain }}:{{ .Values.server.service.port }}
{{- end -}}

{{/* The securityContext every container runs with: the image's nonroot user, nothing more. */}}
{{- define "upgradescope.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities: {drop: ["ALL"]}
{{- end -}}

{{/* GOMEMLIMIT at 90% of a memory limit written in Mi or Gi ("" otherwise): the Go heap
gives memory back before the kernel kills the pod. */}}
{{- define "upgradescope.gomemlimit" -}}
{{- $m := toString . -}}
{{- if regexMatch "^[0-9]+Mi$" $m -}}
{{- div (mul (trimSuffix "Mi" $m | atoi) 9) 10 -}}MiB
{{- else if regexMatch "^[0-9]+Gi$" $m -}}
{{- div (mul (trimSuffix "Gi" $m | atoi) 1024 9) 10 -}}MiB
{{- end -}}
{{- end -}}

{{/* upgradescope.seconds: a Go duration (values.schema.json checked its form) in seconds, so
templates can compare two of them. */}}
{{- define "upgradescope.seconds" -}}
{{- $units := dict "ns" 1e-9 "us" 1e-6 "µs" 1e-6 "ms" 1e-3 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9.]+(ns|us|µs|ms|s|m|h)" . -1 -}}
{{- $n := regexFind "^[0-9.]+" . -}}
{{- $total = addf $total (mulf (float64 $n) (get $units (trimPrefix $n .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* upgradescope.serverCAKey: the key of the CA certificate in the server's TLS Secret, which
the agent and the ServiceMonitor trust. Unset, ca.crt with cert-manager (a CA issuer fills it)
and none with server.tls.secretName: a `kubectl create secret tls` Secret has no ca.crt, and a
Secret item that is missing leaves the agent pod in ContainerCreating. */}}
{{- define "upgradescope.serverCAKey" -}}
{{- $t := .Values.server.tls -}}
{{- if $t.caKey -}}
{{- $t.caKey -}}
{{- else if $t.certManager.enabled -}}
ca.crt
{{- end -}}
{{- end -}}
