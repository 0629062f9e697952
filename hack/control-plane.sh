#!/usr/bin/env bash
# Builds etcd and kube-apiserver from the Go module proxy (no container
# registry or release download is reachable here) and caches them outside
# the repo. Prints the directory holding the binaries.
#
#   hack/control-plane.sh                          # build if missing, print the bin dir
#   K8S_VERSION=v1.34.1 hack/control-plane.sh      # another API server (make test-skew)
#   K8S_COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler" hack/control-plane.sh
#                                                  # the components a Gateway conformance run needs
#   hack/control-plane.sh --module-dir             # the throwaway module they are built in (hack/kwok.sh)
#
# Cold, after make build: ~3 min on 2 cores for the default version (it
# shares the repo's compiled libraries, below), ~8 for another; cached:
# instant.
set -euo pipefail

# The newest 1.36 patch the Go module proxy serves and that builds here
# (v1.36.6 is not served): docs/kubernetes-versions.md.
default_version=v1.36.5
K8S_VERSION=${K8S_VERSION:-$default_version}
K8S_COMPONENTS=${K8S_COMPONENTS:-kube-apiserver}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
CACHE_DIR=${CACHE_DIR:-$HOME/.cache/cloud-provider-example}
repo=$(cd "$(dirname "$0")/.." && pwd)
# The default version is built with this repo's library versions: its
# k8s.io staging modules (v0.36.6 where kube-apiserver v1.36.5 asks for
# v0.36.5, the same minor's next patch) and every other module the two
# share at the higher of their versions, which is the repo's. The 1,100
# packages kube-apiserver shares with the repo's own build (of its 1,800:
# client-go, apiserver, api, grpc, otel) are then compiled once, by make
# build, not again for the control plane. Another K8S_VERSION (make
# test-skew) is built with its own staging versions, as released.
if [[ $K8S_VERSION == "$default_version" ]]; then
	staging=$(sed -n 's#^[[:space:]]*k8s.io/api \(v[0-9.]*\)$#\1#p' "$repo/go.mod")
	[[ -n $staging ]] || { echo "control-plane: no k8s.io/api version in $repo/go.mod" >&2; exit 1; }
	seed=$repo
else
	staging=${K8S_VERSION/v1./v0.}
	seed=
fi
out=$CACHE_DIR/control-plane/k8s-$K8S_VERSION-staging-$staging-etcd-$ETCD_VERSION
say() { echo "control-plane: $*" >&2; }
work=$CACHE_DIR/control-plane/build
if [[ ${1:-} == --module-dir ]]; then
	echo "$work/k8s-$K8S_VERSION-staging-$staging"
	exit 0
fi

missing() {
	local c
	for c in etcd $K8S_COMPONENTS; do
		[[ -x $out/$c ]] || return 0
	done
	return 1
}
if ! missing; then
	echo "$out"
	exit 0
fi
mkdir -p "$out" "$work"
export GOFLAGS=-mod=mod GOWORK=off GOTOOLCHAIN=local

if [[ ! -x $out/etcd ]]; then
	say "building etcd $ETCD_VERSION (cold: ~3 min)"
	mkdir -p "$work/etcd"
	cd "$work/etcd"
	[[ -f go.mod ]] || go mod init throwaway/etcd >/dev/null 2>&1
	go mod edit -require=go.etcd.io/etcd/server/v3@$ETCD_VERSION
	go mod download go.etcd.io/etcd/server/v3 >&2
	SECONDS=0
	# A name of its own: two builds at once (make and a test) both finish.
	# -s -w: no symbol table or DWARF, which the linker spends a while on.
	go build -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w" -o "$out/etcd.tmp.$$" go.etcd.io/etcd/server/v3
	mv "$out/etcd.tmp.$$" "$out/etcd"
	say "etcd built in ${SECONDS}s"
fi

for component in $K8S_COMPONENTS; do
	[[ -x $out/$component ]] && continue
	say "building $component $K8S_VERSION (cold: ~3 to 8 min for kube-apiserver, ~2 GB RAM)"
	mkdir -p "$work/k8s-$K8S_VERSION-staging-$staging"
	cd "$work/k8s-$K8S_VERSION-staging-$staging"
	if [[ ! -f go.sum ]]; then
		rm -f go.mod
		if [[ -n $seed ]]; then
			say "starting from the library versions of $seed/go.mod"
			cp "$seed/go.mod" "$seed/go.sum" .
			go mod edit -module=throwaway/k8s
		else
			go mod init throwaway/k8s >/dev/null 2>&1
		fi
		go mod edit -require=k8s.io/kubernetes@$K8S_VERSION
		say "downloading k8s.io/kubernetes $K8S_VERSION module"
		kmod=$(go mod download -json k8s.io/kubernetes@$K8S_VERSION | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		# k8s.io/kubernetes replaces its staging modules with local paths; pin
		# each to a published v0.x version instead ($staging, above).
		for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$kmod"); do
			go mod edit -replace="$m=$m@$staging"
		done
	fi
	{
		printf '//go:build tools\n\npackage tools\n\n'
		for c in $K8S_COMPONENTS; do printf 'import _ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
	} >tools.go
	say "resolving dependencies"
	go mod tidy >&2 2>&1 || go get "k8s.io/kubernetes/cmd/$component@$K8S_VERSION" >&2
	SECONDS=0
	minor=$(echo "$K8S_VERSION" | cut -d. -f2)
	v=k8s.io/component-base/version
	ldflags="-s -w -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
	say "compiling $component"
	go build -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" -o "$out/$component.tmp.$$" "k8s.io/kubernetes/cmd/$component"
	mv "$out/$component.tmp.$$" "$out/$component"
	say "$component built in ${SECONDS}s"
done
echo "$out"
