#!/usr/bin/env bash
# Builds golangci-lint from the Go module proxy (no release download is
# reachable here), cached outside the repo, and prints its path. make lint
# runs it with the committed .golangci.yml; make test runs make lint.
#
#   hack/golangci-lint.sh   # build if missing, print the binary's path
#
# Cold: ~2 min of CPU on 2 cores (5 min wall on a busy machine); cached: instant.
set -euo pipefail

VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
exec "$(dirname "$0")/gotool.sh" golangci-lint github.com/golangci/golangci-lint/v2 "$VERSION" \
	github.com/golangci/golangci-lint/v2/cmd/golangci-lint "-X main.version=${VERSION#v}"
