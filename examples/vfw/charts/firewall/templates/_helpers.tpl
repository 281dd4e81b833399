{{/* The name of the app's Deployment, e.g. fw0-firewall. */}}
{{- define "firewall.fullname" -}}
{{- printf "%s-%s" (.Values.vnfNamePrefix | default "fw0") .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object of the app carries. */}}
{{- define "firewall.labels" -}}
app: {{ .Chart.Name }}
release: {{ .Release.Name | quote }}
{{- end -}}
