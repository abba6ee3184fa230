{{/* Refusals of a server configuration that would not run or would fail open. Included by
server-deployment.yaml so a bad combination fails the render, naming the values. */}}
{{- define "upgradescope.serverChecks" -}}
{{- $s := .Values.server -}}
{{- if and (gt (int $s.replicas) 1) (not $s.database.existingSecret) -}}
{{- fail "server.replicas > 1 needs server.database.existingSecret (a PostgreSQL URL): SQLite has one writer" -}}
{{- end -}}
{{- if and (not $s.existingSecret) (not $s.ingestToken) -}}
{{- fail "server.enabled needs server.ingestToken or server.existingSecret: agents push with the ingest token" -}}
{{- end -}}
{{- if and $s.existingSecret (or $s.ingestToken $s.readToken $s.adminToken) -}}
{{- fail "server.existingSecret holds the tokens: do not also set server.ingestToken, readToken or adminToken" -}}
{{- end -}}
{{- if and $s.existingSecret (not $s.existingSecretKeys.ingestToken) -}}
{{- fail "server.existingSecretKeys.ingestToken: name the key holding the ingest token" -}}
{{- end -}}
{{- $n := $s.notifications -}}
{{- if and (not $n.existingSecret) (or $n.slackWebhookKey $n.webhookKey $n.webhookSecretKey) -}}
{{- fail "server.notifications keys need server.notifications.existingSecret, the Secret holding them" -}}
{{- end -}}
{{- if and $n.webhookSecretKey (not $n.webhookKey) -}}
{{- fail "server.notifications.webhookSecretKey signs webhook bodies: set server.notifications.webhookKey too" -}}
{{- end -}}
{{- if and $s.tls.secretName $s.tls.certManager.enabled -}}
{{- fail "server.tls: give either secretName or certManager.enabled, not both" -}}
{{- end -}}
{{- if and $s.tls.certManager.enabled (not $s.tls.certManager.issuerRef.name) -}}
{{- fail "server.tls.certManager.enabled needs server.tls.certManager.issuerRef.name" -}}
{{- end -}}
{{- if and $s.ingress.enabled (not $s.ingress.host) -}}
{{- fail "server.ingress.enabled needs server.ingress.host" -}}
{{- end -}}
{{- if and $s.ingress.enabled $s.allowAnonymousRead (not $s.ingress.allowAnonymousRead) -}}
{{- fail "server.allowAnonymousRead with an Ingress exposes the fleet to anyone: set server.ingress.allowAnonymousRead too if that is meant" -}}
{{- end -}}
{{- if and $s.allowAnonymousRead (ne $s.service.type "ClusterIP") -}}
{{- fail (printf "server.allowAnonymousRead with server.service.type %s exposes the fleet outside the cluster unguarded: use ClusterIP, or a read token" $s.service.type) -}}
{{- end -}}
{{- /* The server refuses equal tokens at start (one would grant the other's rights): refuse
them at install instead of a crash-looping pod. */ -}}
{{- $tokens := ternary (list $s.existingSecretKeys.ingestToken $s.existingSecretKeys.readToken $s.existingSecretKeys.adminToken) (list $s.ingestToken $s.readToken $s.adminToken) (not (empty $s.existingSecret)) -}}
{{- $given := without $tokens "" -}}
{{- if ne (len $given) (len (uniq $given)) -}}
{{- fail (ternary "server.existingSecretKeys: the ingest, read and admin tokens must be different keys" "server.ingestToken, readToken and adminToken must all differ" (not (empty $s.existingSecret))) -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not (include "upgradescope.tokenKey" (dict "root" . "token" "readToken"))) -}}
{{- fail "metrics.serviceMonitor needs a read token (server.readToken or server.existingSecretKeys.readToken): /metrics answers fleet-wide readers only" -}}
{{- end -}}
{{- end -}}
