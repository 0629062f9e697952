#!/usr/bin/env bash
# Builds kwok (fake kubelets: nodes report Ready, pods bound to them become
# Ready without a container) from the Go module proxy, keeps the stages it
# needs beside it (the binary has none of its own; kwokctl adds them), and
# prints its path. internal/testcluster runs it for the Gateway API
# conformance run, whose echo Deployments must have Ready pods.
#
#   hack/kwok.sh        # build if missing, print the binary's path
#
# It is built with the Kubernetes libraries of the default control plane
# where hack/control-plane.sh has resolved them (make workloads builds that
# first), so that the packages kwok shares with kube-controller-manager are
# compiled once: about 1 min cold instead of 2. Alone, or should that build
# fail, it is built with the versions its own go.mod asks for.
#
# Cached: instant.
set -euo pipefail

KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
CACHE_DIR=${CACHE_DIR:-$HOME/.cache/cloud-provider-example}
export CACHE_DIR
here=$(cd "$(dirname "$0")" && pwd)
build() { "$here/gotool.sh" kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok; }
# K8S_VERSION emptied: kwok needs the 1.36 libraries even when a skew run
# set another version.
seed=$(K8S_VERSION='' "$here/control-plane.sh" --module-dir)
if ! bin=$(GOTOOL_SEED=$seed build); then
	echo "kwok: the build with the control plane's library versions failed; building with kwok's own" >&2
	bin=$(build)
fi
stages=$(dirname "$bin")/stages
if [[ ! -f $stages/.complete ]]; then
	mod=$(GOFLAGS=-mod=mod GOWORK=off go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" |
		sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	mkdir -p "$stages"
	# What kwokctl's default cluster runs: fast node start-up, heartbeats
	# through a Lease, pods Ready at once, completion and deletion.
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		cp "$mod/kustomize/stage/$f" "$stages/$(basename "$f")"
	done
	chmod 0644 "$stages"/*.yaml
	touch "$stages/.complete"
fi
echo "$bin"
