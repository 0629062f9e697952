#!/usr/bin/env bash
# Installs Debian's Chromium (headless, for the review page's browser test
# and benchmark) when it is missing, and prints the browser binary's path.
# chromedp drives it from go test over a pipe: no driver, no port, no
# download of its own.
#
#   hack/chromium.sh    # install if missing, print the binary's path
#
# Cold: ~30 s (apt-get update, 26 packages, 125 MB); installed: instant.
# The binary, not /usr/bin/chromium: that wrapper's shell script trips on
# a doubly mounted /dev/shm and adds flags of its own.
set -euo pipefail

bin=/usr/lib/chromium/chromium
if [[ ! -x $bin ]]; then
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		echo "chromium.sh: $bin is missing: install Debian's chromium package (apt-get install chromium fonts-liberation)" >&2
		exit 1
	fi
	echo "chromium.sh: installing Debian's chromium (apt-get)" >&2
	apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium fonts-liberation >&2
fi
echo "$bin"
