{{/*
The only label of every object: deploy/base has no other, and the defaults
must render exactly deploy/base.
*/}}
{{- define "ccm.labels" -}}
app.kubernetes.io/name: example-cloud-controller-manager
{{- end }}

{{/*
The controller's namespace. Helm stores its release record in the release
namespace before creating anything, so a release in the namespace the chart
creates would fail on its own Namespace: refuse that early.
*/}}
{{- define "ccm.namespace" -}}
{{- if and .Values.namespace.create (eq .Release.Namespace .Values.namespace.name) -}}
{{- fail (printf "namespace.create: the chart creates namespace %q: install the release into another namespace (e.g. --namespace kube-system), or set namespace.create=false" .Values.namespace.name) -}}
{{- end -}}
{{- required "namespace.name is required" .Values.namespace.name -}}
{{- end }}

{{- define "ccm.serviceAccountName" -}}
{{- required "serviceAccount.name is required" .Values.serviceAccount.name -}}
{{- end }}

{{- define "ccm.configMapName" -}}
{{- .Values.cloudConfig.existingConfigMap | default "example-cloud-config" -}}
{{- end }}

{{- define "ccm.credentialsSecretName" -}}
{{- .Values.credentials.existingSecret | default "example-cloud-credentials" -}}
{{- end }}

{{/* The controller's ServiceAccount as an RBAC subject. */}}
{{- define "ccm.subject" -}}
- kind: ServiceAccount
  name: {{ include "ccm.serviceAccountName" . }}
  namespace: {{ include "ccm.namespace" . }}
{{- end }}

{{/* Where the state backend's credentials Secret is mounted (pg, http). */}}
{{- define "ccm.stateCredentialsDir" -}}
/etc/example/state
{{- end }}

{{/*
The cloud config's state section, from .Values.state: the backend's
settings without empty ones, and the paths of its mounted credentials.
*/}}
{{- define "ccm.state" -}}
{{- $s := .Values.state -}}
{{- $dir := include "ccm.stateCredentialsDir" . -}}
{{- $out := dict "type" $s.type -}}
{{- with $s.keyTemplate }}{{ $_ := set $out "keyTemplate" . }}{{ end -}}
{{- $attrs := dict -}}
{{- if eq $s.type "kubernetes" -}}
{{- $attrs = dict "namespace" (include "ccm.namespace" .) "inClusterConfig" true -}}
{{- else if eq $s.type "pg" -}}
{{- $attrs = dict "connStrFile" (printf "%s/conn-str" $dir) -}}
{{- if not $s.credentialsSecret -}}
{{- fail "state.credentialsSecret: required for the pg backend (a Secret with key conn-str, the connection string)" -}}
{{- end -}}
{{- else if eq $s.type "http" -}}
{{- if $s.credentialsSecret -}}
{{- $attrs = dict "usernameFile" (printf "%s/username" $dir) "passwordFile" (printf "%s/password" $dir) -}}
{{- end -}}
{{- else if eq $s.type "s3" -}}
{{- else if eq $s.type "local" -}}
{{- fail "state.type: local keeps states on the pod's scratch filesystem, they would be lost: use kubernetes, pg, s3 or http" -}}
{{- else -}}
{{- fail (printf "state.type: unknown backend %q (kubernetes, pg, s3 or http)" $s.type) -}}
{{- end -}}
{{- if ne $s.type "kubernetes" -}}
{{- range $k, $v := (get $s $s.type | default dict) -}}
{{- if $v }}{{ $_ := set $attrs $k $v }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out $s.type $attrs -}}
{{- toYaml $out -}}
{{- end }}

{{/* The webhook's certificate from cert-manager (webhook.certificates.mode). */}}
{{- define "ccm.certManager" -}}
{{- $mode := .Values.webhook.certificates.mode -}}
{{- if and .Values.webhook.enabled (eq $mode "cert-manager") -}}
true
{{- else if not (has $mode (list "self-managed" "cert-manager")) -}}
{{- fail (printf "webhook.certificates.mode: %q: want self-managed or cert-manager" $mode) -}}
{{- end -}}
{{- end }}

{{/* Where cert-manager's Secret is mounted. */}}
{{- define "ccm.webhookTLSDir" -}}
/etc/example-ccm/webhook-tls
{{- end }}

{{/* The cloud config's webhook section. */}}
{{- define "ccm.webhook" -}}
{{- $w := dict "enabled" .Values.webhook.enabled -}}
{{- if include "ccm.certManager" . -}}
{{- $dir := include "ccm.webhookTLSDir" . -}}
{{- $_ := set $w "certificates" (dict "mode" "files" "certFile" (printf "%s/tls.crt" $dir) "keyFile" (printf "%s/tls.key" $dir)) -}}
{{- end -}}
{{- toYaml $w -}}
{{- end }}

{{/*
The cloud config: .Values.cloudConfig with what the chart owns set over it
(the token files of the credentials mount, the state, the review namespace,
whether the webhook runs and its certificate files).
*/}}
{{- define "ccm.cloudConfig" -}}
{{- $c := omit (deepCopy .Values.cloudConfig) "existingConfigMap" -}}
{{- if hasKey $c "state" -}}
{{- fail "cloudConfig.state: set the state backend with the chart's state values, not in cloudConfig" -}}
{{- end -}}
{{- $owned := dict
  "api" (dict "tokenFile" "/etc/example/credentials/token")
  "metadata" (dict "tokenFile" "/etc/example/credentials/readonly-token")
  "state" (include "ccm.state" . | fromYaml)
  "review" (dict "namespace" (include "ccm.namespace" .))
  "webhook" (include "ccm.webhook" . | fromYaml)
  "sharding" (dict "enabled" .Values.sharding.enabled "shards" (int .Values.sharding.shards) "leaseDuration" .Values.sharding.leaseDuration)
  "gatewayAPI" (dict "enabled" .Values.gatewayAPI.enabled) -}}
{{- toYaml (mergeOverwrite $c $owned) -}}
{{- end }}

{{/* The rules and match conditions of both webhooks: LoadBalancer Services. */}}
{{- define "ccm.webhookMatch" -}}
rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [services]
matchConditions:
  - name: load-balancer
    expression: >-
      object.spec.type == 'LoadBalancer' ||
      (oldObject != null && oldObject.spec.type == 'LoadBalancer')
{{- end }}
