#!/bin/sh
# Creates the virtual environment. Debian ships venv's pip bootstrap as a separate package
# (python3-venv); install it when we can, otherwise say what to install.
set -e
python="$1"
venv="$2"
if [ -z "$python" ]; then
    echo "error: no python3 found; install Python 3.11 (Debian: apt-get install python3)" >&2
    exit 1
fi
if ! "$python" -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
        "$python" -m venv "$venv"
    else
        echo "error: '$python -m venv' failed; install python3-venv (Debian) and retry" >&2
        exit 1
    fi
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
