#!/bin/sh
# Installs Debian's chromium for the browser tests when it is missing and we can (root + apt).
# When we cannot, the browser tests skip themselves and say why; every other test still runs.
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's chromium for the browser tests..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
    echo "note: /usr/bin/chromium is missing and cannot be installed here (needs root and" \
         "apt-get); the browser tests will be skipped."
fi
