{{- define "upgradescope.name" -}}{{ .Release.Name }}-agent{{- end -}}
{{- define "upgradescope.labels" -}}
app.kubernetes.io/name: upgradescope
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
