#!/usr/bin/env bash
# Builds OpenTofu from the Go module proxy (no release download is reachable
# here) into the cache and prints the binary's path.
#
#   hack/tofu.sh            # build if missing, print the binary's path
#
# Not hack/gotool.sh: OpenTofu's go.mod replaces hashicorp/hcl/v2 with its
# own fork, and a throwaway module requiring OpenTofu would ignore that
# replace (the build would use upstream hcl). So the module source is
# downloaded and built in a copy of it, with its own go.mod and go.sum.
# The release stamp (version.dev=no) makes `tofu version` print "1.10.10",
# not "1.10.10-dev", as terraform-exec reads it from `version -json`.
#
# Cold: ~1 min of downloads, then 5.2 min of CPU compiling (1.3 GB peak):
# ~4 min on 2 idle cores, 9-11 min on 2 busy ones; cached: instant. The
# binary is ~90 MB. CACHE_DIR overrides
# ~/.cache/cloud-provider-example; TOFU_VERSION overrides the pin.
set -euo pipefail

TOFU_VERSION=${TOFU_VERSION:-v1.10.10}
CACHE_DIR=${CACHE_DIR:-$HOME/.cache/cloud-provider-example}
module=github.com/opentofu/opentofu
out=$CACHE_DIR/tools/tofu-$TOFU_VERSION/tofu
say() { echo "tofu: $*" >&2; }

if [[ -x $out ]]; then
	echo "$out"
	exit 0
fi
export GOFLAGS=-mod=mod GOWORK=off GOTOOLCHAIN=local
say "downloading $module@$TOFU_VERSION"
dir=$(go mod download -json "$module@$TOFU_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[[ -n $dir && -f $dir/go.mod ]] || { say "no module source for $module@$TOFU_VERSION"; exit 1; }

# The module cache is read-only: build in a writable copy.
work=$CACHE_DIR/tools/build/tofu-$TOFU_VERSION
rm -rf "$work"
mkdir -p "$(dirname "$work")" "$(dirname "$out")"
cp -r "$dir" "$work"
chmod -R u+w "$work"
cd "$work"
SECONDS=0
# go build downloads the modules cmd/tofu's packages need (212 of the 567
# in OpenTofu's graph); go mod download fetched what every package and test
# of the module needs, 51 s of a cold run.
say "downloading what cmd/tofu needs and compiling it (cold: several minutes on 2 cores)"
go build -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w -X $module/version.dev=no" -o "$out.tmp" ./cmd/tofu
mv "$out.tmp" "$out"
say "built in ${SECONDS}s: $out"
cd /
rm -rf "$work"
echo "$out"
