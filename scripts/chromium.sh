#!/usr/bin/env sh
# Installs Debian's chromium package, the browser the dashboard's
# end-to-end tests drive (internal/webui/e2e, through playwright-core with
# executablePath). `make test` runs this when /usr/bin/chromium is missing.
set -eu
if [ -x /usr/bin/chromium ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "chromium.sh: no apt-get here; install Chromium at /usr/bin/chromium by hand" >&2
	exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
