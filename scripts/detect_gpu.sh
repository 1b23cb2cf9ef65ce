#!/bin/sh
# Prints 1 when this machine has an NVIDIA GPU, else 0: an nvidia-smi that lists one
# (`nvidia-smi -L` prints "GPU 0: <name> (UUID: ...)" per GPU), or a GPU folder under the
# kernel module's /proc/driver/nvidia/gpus/ (there even when nvidia-smi is not installed).
# $1: the nvidia-smi to run (default: nvidia-smi on PATH); $2: the NVIDIA proc folder (default
# /proc/driver/nvidia). The Makefile passes both so tests can point them elsewhere.
smi="${1:-nvidia-smi}"
proc="${2:-/proc/driver/nvidia}"
if command -v "$smi" >/dev/null 2>&1; then
    # nvidia-smi can hang on a wedged driver: bound it where coreutils' timeout exists.
    if command -v timeout >/dev/null 2>&1; then
        listed="$(timeout 20 "$smi" -L 2>/dev/null)"
    else
        listed="$("$smi" -L 2>/dev/null)"
    fi
    if printf '%s\n' "$listed" | grep -q '^GPU [0-9]'; then
        echo 1
        exit 0
    fi
fi
if [ -d "$proc/gpus" ] && [ -n "$(ls -A "$proc/gpus" 2>/dev/null)" ]; then
    echo 1
    exit 0
fi
echo 0
