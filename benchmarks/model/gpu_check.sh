#!/bin/sh
# hierlstm's one check of a GPU machine: run it once, from anywhere, after `make run` or
# `make test` has made .venv (on a machine with an NVIDIA GPU that installs tensorflow[and-cuda]):
#
#     benchmarks/model/gpu_check.sh
#
# Steps, each with its own JSON output and log in test-artifacts/gpu-check-<host>-<time>/:
#   1. `doctor --json`: the build, the driver, the GPUs, every problem with its fix, the probe;
#   2. `check` in float32, mixed_float16 and mixed_bfloat16 (every variant against numpy);
#   3. `bench` of every variant, without and with XLA, at 8x50, 32x100 and 128x200 (batch x
#      time steps), interleaved, stored in the folder's results.sqlite3 and exported as
#      results.json (the app's Results page imports it); then `check --task training` and the
#      same benches of a training step (forward, backward, SGD update, and its phases);
#   4. the PyTorch peer on the same device (python -m benchmarks.model.gpu_peer) when torch is installed
#      (a CUDA build of it on a GPU);
#   5. Keras's other backends, each whose packages are installed (requirements-backends-gpu.txt
#      on a GPU machine): `check --backend B` (forward and training) for each, then the portable
#      variants on every installed backend at each shape, forward and training, interleaved
#      across the backends' worker processes (backends-<shape>.out, backends-train-<shape>.out);
#   6. report.md: the machine, the versions, every table and ratio (the backends' steps are in
#      steps.tsv and their JSON beside it).
# Without TensorFlow (a venv with only JAX and PyTorch) steps 1-4 cannot run and are skipped:
# the portable variants still run on JAX and torch (the command line's path for them imports no
# TensorFlow).
# On a machine where TensorFlow sees no GPU the same steps run on the CPU and the report says
# so. A few minutes on a GPU; the longest single step is time_distributed's first call at 200
# time steps (it traces 200 inner LSTM calls, on the CPU, whatever the device: about 30 s, 50 s
# with XLA). REPEATS and WARMUP (default 10 and 2) set the timing; PYTHON the interpreter;
# SHAPES the sizes (default "8x50 32x100 128x200"). QUICK=1 times 8x50 only: doctor (with the
# and-cuda wheels it finds), the checks, and every variant with and without XLA, forward and
# training, with the kernel that ran and first-call and steady times, which answers the open
# questions of a new GPU in a few minutes.
# Under XLA every LSTM takes the generic kernel (XLA cannot compile cuDNN's), so each table's
# "XLA / no XLA" column is the real choice on a GPU: XLA with the generic kernel against cuDNN
# without XLA; its kernel column shows both.
# DRY_RUN=1 prints each step's command instead of running it (and writes no report).
# Exit status: doctor's (0 every device works, 1 a GPU is present but unusable, 2 bad setup);
# without TensorFlow, 0.
set -u
cd "$(dirname "$0")/../.."
PY="${PYTHON:-.venv/bin/python}"
if [ ! -x "$PY" ]; then
    echo "error: $PY not found: run make run or make test first, or set PYTHON" >&2
    exit 2
fi
REPEATS="${REPEATS:-10}"
if [ "${QUICK:-0}" = 1 ]; then
    SHAPES="${SHAPES:-8x50}"
else
    SHAPES="${SHAPES:-8x50 32x100 128x200}"
fi
WARMUP="${WARMUP:-2}"
OUT="${OUT:-test-artifacts/gpu-check-$(uname -n)-$(date -u +%Y%m%dT%H%M%SZ)}"
DB="$OUT/results.sqlite3"
mkdir -p "$OUT" || exit 2
: > "$OUT/steps.tsv"
BEGAN=$(date +%s)

# step NAME COMMAND...: stdout to NAME.json (or .md), stderr to NAME.log, one line in steps.tsv
step() {
    name="$1"
    shift
    if [ "${DRY_RUN:-0}" = 1 ]; then
        echo "$name: $*"
        return 0
    fi
    started=$(date +%s)
    printf '%-28s ' "$name" >&2
    "$@" > "$OUT/$name.out" 2> "$OUT/$name.log"
    status=$?
    seconds=$(($(date +%s) - started))
    printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$seconds" "$*" >> "$OUT/steps.tsv"
    echo "exit $status, $seconds s" >&2
    return $status
}

echo "hierlstm GPU check: writing $OUT" >&2
# The Keras backends whose packages are installed (hierlstm.backends.missing imports none of them).
INSTALLED=$("$PY" -c "from hierlstm.backends import BACKENDS, missing; print(' '.join(b for b in BACKENDS if missing(b) is None))") || exit 2
PORTABLE=$("$PY" -c "from hierlstm.registry import VARIANTS; print(' '.join(n for n, v in VARIANTS.items() if len(v.backends) > 1))") || exit 2
echo "installed Keras backends: ${INSTALLED:-none}" >&2
DOCTOR=0
case " $INSTALLED " in
    *" tensorflow "*) TENSORFLOW=1 ;;
    *) TENSORFLOW=0
       echo "TensorFlow is not installed: its steps are skipped; the portable variants run on" \
            "the other backends." >&2
       printf '%s\t%s\t%s\t%s\n' tensorflow skipped 0 "TensorFlow is not installed" >> "$OUT/steps.tsv" ;;
esac

if [ "$TENSORFLOW" = 1 ]; then
step doctor "$PY" -m hierlstm doctor --json
DOCTOR=$?
if ! "$PY" -c "import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))['tensorflow_gpus'] else 1)" "$OUT/doctor.out" 2>/dev/null; then
    echo "No GPU that TensorFlow can use was found: every step below runs on the CPU." >&2
    [ "$DOCTOR" = 1 ] && echo "An NVIDIA GPU is present but unusable: see doctor in the report." >&2
fi

for precision in float32 mixed_float16 mixed_bfloat16; do
    step "check-$precision" "$PY" -m hierlstm check --precision "$precision" --json
done

VARIANTS=$("$PY" -c "from hierlstm.registry import VARIANTS; print(' '.join(VARIANTS))") || exit 2
FLAGS=""
for variant in $VARIANTS; do
    FLAGS="$FLAGS --variant $variant"
done
for shape in $SHAPES; do
    batch=${shape%x*}
    steps=${shape#*x}
    for xla in "" --xla; do
        # shellcheck disable=SC2086 # FLAGS is a list of words
        step "bench-$shape${xla:+-xla}" "$PY" -m hierlstm bench $FLAGS --batch-size "$batch" \
            --time-steps "$steps" --repeats "$REPEATS" --warmup "$WARMUP" --json --db "$DB" $xla
    done
done

# The training step: every variant but time_distributed, whose gradient graph unrolls one inner
# LSTM call per time step (over the trace budget past 66 steps), so it trains at 8x50 only.
step check-training "$PY" -m hierlstm check --task training --json
for shape in $SHAPES; do
    batch=${shape%x*}
    steps=${shape#*x}
    TRAIN_FLAGS=""
    for variant in $VARIANTS; do
        if [ "$variant" != time_distributed ] || [ "$shape" = 8x50 ]; then
            TRAIN_FLAGS="$TRAIN_FLAGS --variant $variant"
        fi
    done
    for xla in "" --xla; do
        # shellcheck disable=SC2086 # TRAIN_FLAGS is a list of words
        step "train-$shape${xla:+-xla}" "$PY" -m hierlstm bench --task training $TRAIN_FLAGS \
            --batch-size "$batch" --time-steps "$steps" --repeats "$REPEATS" --warmup "$WARMUP" \
            --json --db "$DB" $xla
    done
done

# The peer runs where hierlstm ran: the GPU when TensorFlow has one and torch has CUDA.
PEER=$("$PY" - "$OUT/doctor.out" 2>/dev/null <<'PYTHON'
import json, sys
try:
    gpus = json.load(open(sys.argv[1]))["tensorflow_gpus"]
except (OSError, ValueError, KeyError):
    gpus = []
try:
    import torch
except ImportError:
    print("none:PyTorch is not installed (pip install -r requirements-bench.txt)")
    sys.exit()
if not gpus:
    print("cpu")
elif torch.cuda.is_available():
    print("gpu:0")
else:
    print(f"none:this PyTorch ({torch.__version__}) has no CUDA, so it cannot run on the GPU")
PYTHON
)
case "$PEER" in
    cpu | gpu:*)
        step peer "$PY" -m benchmarks.model.gpu_peer --device "$PEER" --repeats "$((REPEATS * 2))" \
            --json "$OUT/peer.json" ;;
    *)
        reason="${PEER#none:}"
        echo "no PyTorch peer: ${reason:-the check for PyTorch failed}" >&2
        printf '%s\t%s\t%s\t%s\n' peer skipped 0 "${reason:-the check for PyTorch failed}" \
            >> "$OUT/steps.tsv" ;;
esac

fi  # TensorFlow's steps

# Keras's other backends: each installed one checked, then the portable variants on all of them,
# interleaved across their worker processes (TensorFlow's too when it is installed).
BACKEND_FLAGS=""
for backend in $INSTALLED; do
    BACKEND_FLAGS="$BACKEND_FLAGS --backend $backend"
    if [ "$backend" != tensorflow ]; then
        step "check-$backend" "$PY" -m hierlstm check --backend "$backend" --json
        step "check-training-$backend" "$PY" -m hierlstm check --task training --backend "$backend" --json
    fi
done
PORTABLE_FLAGS=""
for variant in $PORTABLE; do
    PORTABLE_FLAGS="$PORTABLE_FLAGS --variant $variant"
done
if [ "$INSTALLED" != tensorflow ] && [ -n "$INSTALLED" ]; then
    for shape in $SHAPES; do
        batch=${shape%x*}
        steps=${shape#*x}
        TRAIN_FLAGS=""
        for variant in $PORTABLE; do
            if [ "$variant" != time_distributed ] || [ "$shape" = 8x50 ]; then
                TRAIN_FLAGS="$TRAIN_FLAGS --variant $variant"
            fi
        done
        # shellcheck disable=SC2086 # the flags are lists of words
        step "backends-$shape" "$PY" -m hierlstm bench $BACKEND_FLAGS $PORTABLE_FLAGS \
            --batch-size "$batch" --time-steps "$steps" --repeats "$REPEATS" --warmup "$WARMUP" \
            --json --db "$DB"
        # shellcheck disable=SC2086
        step "backends-train-$shape" "$PY" -m hierlstm bench --task training $BACKEND_FLAGS \
            $TRAIN_FLAGS --batch-size "$batch" --time-steps "$steps" --repeats "$REPEATS" \
            --warmup "$WARMUP" --json --db "$DB"
    done
fi

step export "$PY" -m hierlstm results export --format json --output "$OUT/results.json" --db "$DB"
[ "${DRY_RUN:-0}" = 1 ] && exit 0
if [ "$TENSORFLOW" = 1 ]; then
    "$PY" -m benchmarks.model.gpu_report "$OUT" --seconds "$(($(date +%s) - BEGAN))" || exit 2
    echo "report: $OUT/report.md (send the whole folder)" >&2
else
    echo "no report.md without TensorFlow: the JSON outputs and steps.tsv are in $OUT" >&2
fi
exit "$DOCTOR"
