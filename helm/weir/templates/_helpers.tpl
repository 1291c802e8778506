{{/* Name of the chart, overridable with nameOverride. */}}
{{- define "weir.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name of the release's objects. */}}
{{- define "weir.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels that select the pods. */}}
{{- define "weir.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weir.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "weir.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "weir.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The ports of both Services: HTTP and weir.v1.Data (the headless one adds the peer port). */}}
{{- define "weir.servicePorts" -}}
- name: http
  port: {{ .Values.ports.http }}
  targetPort: http
  protocol: TCP
- name: grpc
  port: {{ .Values.ports.grpc }}
  targetPort: grpc
  protocol: TCP
{{- end }}

{{/* The Secret holding the members' shared token (key `token`). */}}
{{- define "weir.peerSecretName" -}}
{{- .Values.peerAuth.existingSecret | default (printf "%s-peer" (include "weir.fullname" .)) }}
{{- end }}

{{/* The weir image. */}}
{{- define "weir.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The drain bound in whole seconds, rounded up (query.observableShutdownTimeoutMs). */}}
{{- define "weir.drainSeconds" -}}
{{- int (ceil (divf (int64 .Values.shutdown.drainTimeoutMs) 1000)) }}
{{- end }}

{{/* terminationGracePeriodSeconds: as given, or the preStop sleep + the drain + the margin. */}}
{{- define "weir.terminationGracePeriodSeconds" -}}
{{- $need := add (int .Values.shutdown.preStopSleepSeconds) (include "weir.drainSeconds" . | int) }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $need (int .Values.shutdown.marginSeconds) }}
{{- else if lt (int .Values.terminationGracePeriodSeconds) (int $need) }}
{{- fail (printf "terminationGracePeriodSeconds: %d does not cover shutdown.preStopSleepSeconds + ceil(shutdown.drainTimeoutMs / 1000) = %d s; raise it or leave it empty to derive it" (int .Values.terminationGracePeriodSeconds) (int $need)) }}
{{- else }}
{{- int .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}
