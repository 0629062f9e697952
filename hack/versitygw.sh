#!/usr/bin/env bash
# Builds versitygw (an S3-compatible gateway; its posix backend keeps
# buckets as directories) from the Go module proxy and prints its path:
# the S3 server of the s3 state backend tests (internal/tests3).
#
#   hack/versitygw.sh        # build if missing, print the binary's path
#
# Cold: ~3 min of CPU (2m50s measured; 5 min wall on a busy 2-core box),
# plus the module download; cached: instant.
set -euo pipefail

VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/gotool.sh" versitygw github.com/versity/versitygw "$VERSITYGW_VERSION" \
	github.com/versity/versitygw/cmd/versitygw
