{{/*
The chart's name, overridable with nameOverride; 63 characters at most (a DNS label).
*/}}
{{- define "emco.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: fullnameOverride, or <release>-<chart> unless the release name already holds the chart's.
*/}}
{{- define "emco.fullname" -}}
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

{{/*
chart-version, for the helm.sh/chart label.
*/}}
{{- define "emco.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "emco.labels" -}}
helm.sh/chart: {{ include "emco.chart" . }}
app.kubernetes.io/part-of: {{ include "emco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels of emco serve's pods.
*/}}
{{- define "emco.selectorLabels" -}}
app.kubernetes.io/name: {{ include "emco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: api
{{- end }}

{{/*
The etcd objects' name.
*/}}
{{- define "emco.etcd.fullname" -}}
{{- printf "%s-etcd" (include "emco.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels of the etcd members.
*/}}
{{- define "emco.etcd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "emco.name" . }}-etcd
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: store
{{- end }}

{{/*
The service account of emco serve.
*/}}
{{- define "emco.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "emco.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The Secret holding the token file: the user's, or the chart's.
*/}}
{{- define "emco.authSecretName" -}}
{{- default (printf "%s-tokens" (include "emco.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{/*
The container port, from .Values.listen (host:port or [v6]:port).
*/}}
{{- define "emco.containerPort" -}}
{{- regexReplaceAll "^.*:([0-9]+)$" .Values.listen "${1}" }}
{{- end }}

{{/*
The probes' and the Service's scheme.
*/}}
{{- define "emco.scheme" -}}
{{- if .Values.tls.existingSecret }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}

{{/*
etcd's client URLs, comma-separated: the chart's members (through the headless Service) or externalEtcd's.
*/}}
{{- define "emco.etcdEndpoints" -}}
{{- if .Values.etcd.enabled }}
{{- $fullname := include "emco.etcd.fullname" . }}
{{- $endpoints := list }}
{{- range $member := until (int .Values.etcd.replicas) }}
{{- $endpoints = append $endpoints (printf "http://%s-%d.%s.%s.svc:2379" $fullname $member $fullname $.Release.Namespace) }}
{{- end }}
{{- join "," $endpoints }}
{{- else }}
{{- if not .Values.externalEtcd.endpoints }}
{{- fail "etcd.enabled is false: set externalEtcd.endpoints to the client URLs of your etcd" }}
{{- end }}
{{- join "," .Values.externalEtcd.endpoints }}
{{- end }}
{{- end }}

{{/*
etcd's --initial-cluster: every member's peer URL.
*/}}
{{- define "emco.etcd.initialCluster" -}}
{{- $fullname := include "emco.etcd.fullname" . }}
{{- $members := list }}
{{- range $member := until (int .Values.etcd.replicas) }}
{{- $members = append $members (printf "%s-%d=http://%s-%d.%s.%s.svc:2380" $fullname $member $fullname $member $fullname $.Release.Namespace) }}
{{- end }}
{{- join "," $members }}
{{- end }}
