#!/usr/bin/env bash
# Checks (and where it can, installs) what make test needs that is not built
# from the Go module proxy: terraform on PATH, and PostgreSQL's server
# binaries for the pg state backend tests. A missing one fails here, named,
# instead of tests failing one by one.
#
#   hack/prerequisites.sh
#
# PostgreSQL comes from Debian's packages when it is missing and this runs
# as root with apt-get (about a minute); terraform has no package here: it
# comes with the machine (README, prerequisites).
set -euo pipefail

fail=0
if tf=$(command -v terraform); then
	echo "prerequisites: terraform $("$tf" version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p') at $tf"
else
	echo "prerequisites: terraform is not on PATH: install Terraform (1.11.4 is tested) on PATH; no registry is reachable to download it" >&2
	fail=1
fi

find_initdb() {
	command -v initdb 2>/dev/null && return
	ls -d /usr/lib/postgresql/*/bin/initdb /usr/pgsql-*/bin/initdb /usr/local/pgsql/bin/initdb 2>/dev/null | sort -V | tail -1
}
initdb=$(find_initdb || true)
if [ -z "$initdb" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "prerequisites: PostgreSQL server not found: installing Debian's postgresql (apt-get)"
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql
	initdb=$(find_initdb || true)
fi
if [ -n "$initdb" ]; then
	echo "prerequisites: PostgreSQL server binaries at $(dirname "$initdb")"
else
	echo "prerequisites: PostgreSQL's initdb not found (on PATH, in /usr/lib/postgresql/*/bin, ...): install the PostgreSQL server (Debian: apt-get install postgresql) or set TESTPG_BINDIR" >&2
	fail=1
fi
exit $fail
