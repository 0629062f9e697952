#!/usr/bin/env bash
# Fails when a tracked file is over 2 MB: sources only, never binaries or
# build outputs (a 66 MB binary was committed once). Run by make test.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((2 * 1024 * 1024))
# A tracked file deleted in the working tree has no size: stat skips it.
big=$({ git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null || true; } | awk -v l="$limit" '$1 > l {print $2 " (" $1 " bytes)"}')
if [[ -n $big ]]; then
	echo "tracked files over 2 MB (binaries or build outputs?); git rm --cached them and ignore them:" >&2
	echo "$big" >&2
	exit 1
fi
