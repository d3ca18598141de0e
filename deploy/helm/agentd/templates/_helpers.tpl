{{/* Names and labels shared by every template. */}}

{{- define "agentd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's resource name: the release name, or release-chart. */}}
{{- define "agentd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "agentd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agentd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agentd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "agentd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The Secret the replicas take their environment from: one must exist,
the release's or one named, or no pod would start. */}}
{{- define "agentd.secretName" -}}
{{- if not (or .Values.secrets.create .Values.secrets.existingSecret) -}}
{{- fail "secrets: set secrets.existingSecret to the Secret holding the keys, or secrets.create=true" -}}
{{- end -}}
{{- default (include "agentd.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "agentd.postgresName" -}}
{{- printf "%s-postgres" (include "agentd.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The chart's own PostgreSQL as a URL, when it runs one. */}}
{{- define "agentd.postgresURL" -}}
{{- $p := .Values.postgres -}}
{{- printf "postgres://%s:%s@%s:5432/%s?sslmode=disable" $p.user (urlquery (required "postgres.password is required when postgres.enabled" $p.password)) (include "agentd.postgresName" .) $p.database -}}
{{- end -}}
