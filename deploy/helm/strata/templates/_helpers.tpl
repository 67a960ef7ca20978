{{- define "strata.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "strata.headless" -}}{{ include "strata.fullname" . }}-headless{{- end -}}

{{- define "strata.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "strata.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node
{{- end -}}

{{- define "strata.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}

{{/* pod i's DNS name on the headless Service */}}
{{- define "strata.podHost" -}}
{{- $root := index . 0 -}}{{- $i := index . 1 -}}
{{ include "strata.fullname" $root }}-{{ $i }}.{{ include "strata.headless" $root }}.{{ $root.Release.Namespace }}.svc.cluster.local
{{- end -}}

{{/* controller.quorum.voters: id@host:port for every pod, id = ordinal + 1 */}}
{{- define "strata.controllers" -}}
{{- $root := . -}}
{{- $voters := list -}}
{{- range $i := until (int .Values.replicaCount) -}}
{{- $voters = append $voters (printf "%d@%s:%d" (add1 $i) (include "strata.podHost" (list $root $i)) (int $root.Values.controllerPort)) -}}
{{- end -}}
{{ join "," $voters }}
{{- end -}}

{{/* bootstrap.servers for Kafka clients inside the cluster */}}
{{- define "strata.bootstrap" -}}
{{- $root := . -}}{{- $l := first .Values.listeners -}}
{{- $hosts := list -}}
{{- range $i := until (int .Values.replicaCount) -}}
{{- $hosts = append $hosts (printf "%s:%d" (include "strata.podHost" (list $root $i)) (int $l.port)) -}}
{{- end -}}
{{ join "," $hosts }}
{{- end -}}

{{/* the outside address advertised by pod i */}}
{{- define "strata.externalAddr" -}}
{{- $root := index . 0 -}}{{- $i := index . 1 -}}{{- $e := $root.Values.external -}}
{{- if eq $e.type "NodePort" -}}
{{ required "external.host: an address of a node, for NodePort" $e.host }}:{{ add (int $e.nodePortBase) $i }}
{{- else -}}
{{ index (required "external.hosts: one DNS name per pod, for LoadBalancer" $e.hosts) $i }}:{{ $e.port }}
{{- end -}}
{{- end -}}
