package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Pods Ready only once they listen (Options.PodReadyAnnotation): kwok's
// pod-ready stage both gives a pod its IP and makes it Ready, so it is
// split in two. pod-start gives the IP and makes the pod Running but not
// Ready, so that a pod runner can start its process there; pod-ready
// makes it Ready once the runner sets the annotation to "true".

// podStatus is a pod's conditions and containers' statuses: %[1]s is
// "True" or "False" (Ready, and the readiness gates' conditions after
// %[2]s: a range over them, or nothing), %[3]s the containers' ready.
const podStatus = `      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "%[1]s"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "%[1]s"
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

// readinessGates makes a Ready pod's readiness gates' conditions true.
const readinessGates = `      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}
`

// podStage is a Pod stage called name selecting by selector (YAML under
// "selector:"), its status podStatus and then more.
const podStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: %s
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
%s
  next:
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
	phase, match, status, more := "Pending", "", fmt.Sprintf(podStatus, "False", "", "false"), podStartAddresses
	name := "pod-start"
	if annotation != "" {
		name, phase, status, more = "pod-ready", "Running", fmt.Sprintf(podStatus, "True", readinessGates, "true"), ""
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
		selector += `
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
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
		case "pod-ready.yaml":
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
		"pod-start.yaml": stageText(""),
		"pod-ready.yaml": stageText(annotation),
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
