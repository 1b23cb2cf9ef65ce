#!/bin/sh
# Installs Debian's chromium for the browser tests, and a CJK font (fonts-wqy-microhei) so the
# app's Chinese text does not render as boxes in their screenshots, when they are missing and we
# can (root + apt). When we cannot, the browser tests skip themselves and say why; every other
# test still runs.
has_cjk_font() { fc-list 2>/dev/null | grep -qi "wenquanyi\|noto sans cjk"; }
if [ -x /usr/bin/chromium ] && has_cjk_font; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's chromium and a CJK font for the browser tests..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null
elif [ -x /usr/bin/chromium ]; then
    echo "note: no CJK font (fonts-wqy-microhei) and no root to install one; Chinese text in" \
         "browser screenshots will show as boxes."
else
    echo "note: /usr/bin/chromium is missing and cannot be installed here (needs root and" \
         "apt-get); the browser tests will be skipped."
fi
