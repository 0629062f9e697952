#!/usr/bin/env bash
# Builds helm from the Go module proxy (no release download is reachable
# here), cached outside the repo, and prints its path. make test lints and
# renders deploy/chart with it (EXAMPLE_HELM).
#
#   hack/helm.sh        # build if missing, print the binary's path
#
# Cold: ~3 min of CPU on 2 cores (6 min wall on a busy machine); cached: instant.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
# The Kubernetes version helm template and lint assume (.Capabilities, the
# chart's kubeVersion check): that of its client-go, v0.37, as helm's own
# Makefile sets it. Unset, helm assumes 1.20 and refuses the chart (>= 1.30).
K8S_MINOR=37
ldflags="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
	ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$K8S_MINOR"
done
exec "$(dirname "$0")/gotool.sh" helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$ldflags"
