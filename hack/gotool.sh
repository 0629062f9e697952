#!/usr/bin/env bash
# Builds a Go command from the Go module proxy (no release download is
# reachable here) into a cache outside the repo and prints its path. One
# throwaway module per tool and version, so tools never share (or fight
# over) dependency versions, and nothing lands in this repo's go.mod.
#
#   hack/gotool.sh NAME MODULE VERSION PACKAGE [LDFLAGS]
#   hack/gotool.sh helm helm.sh/helm/v3 v3.19.0 helm.sh/helm/v3/cmd/helm
#
# Progress goes to stderr; the binary's path is the only line on stdout.
# Cached: instant. CACHE_DIR overrides ~/.cache/cloud-provider-example.
# GOTOOL_SEED names a module whose go.mod and go.sum the throwaway one
# starts from: the tool is then built with the library versions that module
# resolved, and shares their compiled packages with what it built.
# GOTOOL_MAIN names a main.go (kept out of this repo's packages by a build
# tag, dropped here) that PACKAGE "." is: a command of MODULE's packages
# chosen here (hack/coredns.sh).
set -euo pipefail

if [[ $# -lt 4 ]]; then
	echo "usage: $0 NAME MODULE VERSION PACKAGE [LDFLAGS]" >&2
	exit 2
fi
name=$1 module=$2 version=$3 pkg=$4 ldflags=${5:-}
CACHE_DIR=${CACHE_DIR:-$HOME/.cache/cloud-provider-example}
out=$CACHE_DIR/tools/$name-$version/$name
say() { echo "$name: $*" >&2; }

if [[ -x $out ]]; then
	echo "$out"
	exit 0
fi
work=$CACHE_DIR/tools/build/$name-$version
mkdir -p "$work" "$(dirname "$out")"
cd "$work"
export GOFLAGS=-mod=mod GOWORK=off GOTOOLCHAIN=local
rm -f go.mod go.sum
if [[ -n ${GOTOOL_SEED:-} && -f $GOTOOL_SEED/go.sum ]]; then
	say "starting from the library versions of $GOTOOL_SEED"
	cp "$GOTOOL_SEED/go.mod" "$GOTOOL_SEED/go.sum" .
	go mod edit -module="throwaway/$name"
else
	go mod init "throwaway/$name" >/dev/null 2>&1
fi
say "downloading $module@$version and its dependencies"
# go get lists every module it adds; the downloads are the progress.
if [[ -n ${GOTOOL_MAIN:-} ]]; then
	sed '/^\/\/go:build /d' "$GOTOOL_MAIN" >main.go
	go get "$module@$version" 2>&1 | { grep -v '^go: added ' || true; } >&2
else
	go get "$pkg@$version" 2>&1 | { grep -v '^go: added ' || true; } >&2
fi
SECONDS=0
say "compiling $pkg (cold: a few minutes on 2 cores)"
# -s -w: no symbol table or DWARF, which the linker spends a while on;
# -dwarf=false: none compiled either (the Makefile's GOFLAGS: one flag set,
# so the packages the tools share with the repo's builds compile once).
go build -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg"
mv "$out.tmp" "$out"
say "built in ${SECONDS}s: $out"
echo "$out"
