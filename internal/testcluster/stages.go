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

const podStartStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-start
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ $hostIPs := NodeIPsWith .spec.nodeName }}
      {{ with $hostIPs }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
`

const podReadyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchAnnotations:
      %q: "true"
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
`

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
		"pod-start.yaml": podStartStage,
		"pod-ready.yaml": fmt.Sprintf(podReadyStage, annotation),
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
