#!/usr/bin/env bash
# Builds CoreDNS from the Go module proxy (no image or release download is
# reachable here), cached outside the repo, and prints its path: the
# Gateway API conformance suite's UDPRoute backend (its base manifests'
# coredns Deployment), which internal/clustertraffic runs for that image.
# Only the plugins the suite's Corefile names are compiled in
# (hack/coredns/main.go).
#
#   hack/coredns.sh        # build if missing, print the binary's path
#
# Cold: 96 s on 2 cores (its modules downloaded 61 s, compiled 35 s); cached: instant.
set -euo pipefail

# The version the suite's manifests name (registry.k8s.io/coredns/coredns).
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.2}
here=$(cd "$(dirname "$0")" && pwd)
GOTOOL_MAIN=$here/coredns/main.go exec "$here/gotool.sh" coredns github.com/coredns/coredns "$COREDNS_VERSION" .
