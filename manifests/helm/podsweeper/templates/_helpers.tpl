{{/* The chart's name, or nameOverride. */}}
{{- define "podsweeper.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The objects' name: fullnameOverride, else the release name if it contains the chart's name, else RELEASE-podsweeper.
Truncated to 52 characters, so that the longest derived name (NAME-control-guard) stays a valid 63-character name.
*/}}
{{- define "podsweeper.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object: the kustomize base's (name, part-of) and Helm's. */}}
{{- define "podsweeper.labels" -}}
app.kubernetes.io/name: {{ include "podsweeper.name" . }}
app.kubernetes.io/part-of: podsweeper
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The replicas' labels, which the Service, the PDB and the NetworkPolicy select (as in the kustomize base). */}}
{{- define "podsweeper.selectorLabels" -}}
app.kubernetes.io/name: {{ include "podsweeper.name" . }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "podsweeper.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "podsweeper.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The names the Role grants by name and the Deployment's arguments name. */}}
{{- define "podsweeper.controlConfigMap" -}}{{ include "podsweeper.fullname" . }}-control{{- end -}}
{{- define "podsweeper.policyConfigMap" -}}{{ include "podsweeper.fullname" . }}-policy{{- end -}}
{{- define "podsweeper.adminTokenSecret" -}}{{ .Values.adminToken.existingSecret | default (printf "%s-admin-token" (include "podsweeper.fullname" .)) }}{{- end -}}

{{/*
Annotations of the objects created once, at install, and never again (the kustomize base's manifests/install/): a
pre-install hook is no part of the release, so no upgrade or rollback applies it and no uninstall deletes it. Rendered
only when the object does not exist yet (a reinstall keeps what is there).
*/}}
{{- define "podsweeper.createdOnce" -}}
helm.sh/hook: pre-install
helm.sh/hook-weight: "-5"
{{- end -}}
