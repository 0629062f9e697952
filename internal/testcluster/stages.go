package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/example/cloud-provider-example/podtargets"
)

// Pods Ready only once they listen (Options.PodReadyAnnotation): kwok's
// pod-ready stage both gives a pod its IP and makes it Ready, so it is
// split in two. pod-start gives the IP and makes the pod Running but not
// Ready, so that a pod runner can start its process there; pod-ready
// makes it Ready once the runner sets the annotation to "true".

// podStatus is a pod's conditions and containers' statuses: %[1]s is
// Ready's status, %[4]s ContainersReady's ("True" or "False"), %[2]s
// the readiness gates' conditions after them (a range over them, or
// nothing), %[3]s the containers' ready. $ours tells whether the pod
// waits on a readiness gate of the controller's (podtargets.GatePrefix),
// which kwok leaves to the controller: such a pod is Ready once the
// controller passes it (pod-gates-passed), as a kubelet would.
const podStatus = `      {{ $now := Now }}
      {{ $ours := false }}
      {{ range .spec.readinessGates }}{{ if hasPrefix "` + podtargets.GatePrefix + `" .conditionType }}{{ $ours = true }}{{ end }}{{ end }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "%[1]s"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "%[4]s"
        type: ContainersReady
%[2]s      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: %[3]s
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
`

// readinessGates makes a Ready pod's readiness gates' conditions true,
// but the controller's own.
const readinessGates = `      {{ range .spec.readinessGates }}{{ if not (hasPrefix "` + podtargets.GatePrefix + `" .conditionType) }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}{{ end }}
`

// readyUnlessOurs is pod-ready's Ready: false while a readiness gate of
// the controller's holds the pod.
const readyUnlessOurs = `{{ if $ours }}False{{ else }}True{{ end }}`

// podDelete is kwok's pod-delete stage with its delays in the jq form:
// kwok v0.8.0 reads the deprecated expressionFrom of its own stage file
// as nothing, so a terminating pod went after 1 s whatever its grace
// period. Here a pod goes after its pod-delete.stage.kwok.x-k8s.io/delay
// annotation (1 s without), at a random moment before its
// deletionTimestamp (the end of its grace period; at it, when that comes
// first): a pod whose preStop hook waits, serving, until then.
var podDelete = fmt.Sprintf(stageHeader, "pod-delete", `    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
    - key: '.metadata.finalizers'
      operator: 'DoesNotExist'`) + `  delay:
    durationMilliseconds: 1000
    durationFrom:
      jq:
        expression: '.metadata.annotations["pod-delete.stage.kwok.x-k8s.io/delay"]'
    jitterDurationFrom:
      jq:
        expression: '.metadata.deletionTimestamp'
  next:
    delete: true
`

// gatesPassed is the pod-gates-passed stage: a pod whose containers are
// ready and every readiness gate passed (the controller's too) is Ready.
var gatesPassed = fmt.Sprintf(podStage, "pod-gates-passed", `    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.conditions.[] | select( .type == "ContainersReady" ) | .status'
      operator: 'In'
      values:
      - 'True'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
    - key: '[ .spec.readinessGates[]?.conditionType as $g | [ .status.conditions[]? | select( .type == $g and .status == "True" ) ] | length > 0 ] | all'
      operator: 'In'
      values:
      - 'true'`, `      conditions:
      - lastTransitionTime: {{ Now | Quote }}
        status: "True"
        type: Ready
`, "")

// stageHeader begins a Pod stage called %[1]s selecting by %[2]s (YAML
// under "selector:").
const stageHeader = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: %s
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
%s
`

// podStage is a Pod stage called name selecting by selector, its status
// podStatus and then more.
const podStage = stageHeader + `  next:
    statusTemplate: |
%s%s`

// podStartAddresses gives the pod its node's IPs and its own, and makes
// it Running.
var podStartAddresses = ips("host", "NodeIPsWith .spec.nodeName") +
	ips("pod", `PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" )`) + `      phase: Running
      startTime: {{ $now | Quote }}
`

// ips sets field+"IP" and field+"IPs" from what kwok's function call
// returns.
func ips(field, call string) string {
	return fmt.Sprintf(`      {{ $%[1]sIPs := %[2]s }}
      {{ with $%[1]sIPs }}
      %[1]sIP: {{ index . 0 | Quote }}
      %[1]sIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
`, field, call)
}

// stageText is the pod-start stage, or (annotation set) pod-ready.
func stageText(annotation string) string {
	phase, match, status, more := "Pending", "", fmt.Sprintf(podStatus, "False", "", "false", "False"), podStartAddresses
	name := "pod-start"
	if annotation != "" {
		name, phase, status, more = "pod-ready", "Running", fmt.Sprintf(podStatus, readyUnlessOurs, readinessGates, "true", "True"), ""
		match = fmt.Sprintf("    matchAnnotations:\n      %q: \"true\"\n", annotation)
	}
	selector := match + `    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - '` + phase + `'`
	if annotation != "" {
		// Once: a pod a gate holds stays not Ready with its containers
		// ready.
		selector += `
    - key: '.status.conditions.[] | select( .type == "ContainersReady" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'`
	}
	return fmt.Sprintf(podStage, name, selector, status, more)
}

// gatedStages are the kwok stage files with pod-ready split on
// annotation (the two above), and node-initialize without the addresses
// kwok would give a node that has none: a kubelet of an external cloud
// provider leaves them to the cloud's node controller, and a cluster
// whose nodes carry traffic must not see them all at kwok's one
// --node-ip first. The module's others are kept; the new ones are written
// into dir.
func gatedStages(module []string, dir, annotation string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, st := range module {
		switch filepath.Base(st) {
		case "pod-ready.yaml", "pod-delete.yaml":
		case "node-initialize.yaml":
			p, err := withoutAddresses(st, dir)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		default:
			out = append(out, st)
		}
	}
	for name, text := range map[string]string{
		"pod-start.yaml":        stageText(""),
		"pod-ready.yaml":        stageText(annotation),
		"pod-gates-passed.yaml": gatesPassed,
		"pod-delete.yaml":       podDelete,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.TrimLeft(text, "\n")), 0o644); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// withoutAddresses writes node-initialize stage st into dir without its
// addresses block.
func withoutAddresses(st, dir string) (string, error) {
	b, err := os.ReadFile(st)
	if err != nil {
		return "", err
	}
	text := string(b)
	from, to := strings.Index(text, "{{ $hasInternalIP := false }}"), strings.Index(text, "{{ with NodePort }}")
	if from < 0 || to < from {
		return "", fmt.Errorf("kwok stage %s: its addresses block is not where it was (kwok v0.8.0): update withoutAddresses", st)
	}
	p := filepath.Join(dir, "node-initialize.yaml")
	return p, os.WriteFile(p, []byte(text[:from]+text[to:]), 0o644)
}
