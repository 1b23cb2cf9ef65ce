"""The markdown report of benchmarks/model/gpu_check.sh, from the outputs it left in its folder.

    .venv/bin/python -m benchmarks gpu_report FOLDER [--seconds N]

Reads steps.tsv and each step's `--json` output (doctor.out, check-*.out, bench-*.out, train-*.out,
peer.out), writes FOLDER/report.md and prints it. A step that failed or did not run shows its log's
last line instead of its table.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import sys
from pathlib import Path

from benchmarks.record import argument_parser, cpu_model_and_mhz, markdown_table
from hierlstm.cli.doctor import format_report
from hierlstm.config import PRECISIONS

SHAPES = ((8, 50), (32, 100), (128, 200))


def load(folder: Path, name: str):
    try:
        return json.loads((folder / f"{name}.out").read_text())
    except (OSError, ValueError):
        return None


def last_log_line(folder: Path, name: str) -> str:
    try:
        lines = [line for line in (folder / f"{name}.log").read_text().splitlines() if line.strip()]
    except OSError:
        return "no log"
    return lines[-1].strip()[-200:] if lines else "no output"


def steps(folder: Path) -> list[list[str]]:
    rows = []
    for line in (folder / "steps.tsv").read_text().splitlines():
        name, status, seconds, command = (line.split("\t") + ["", "", "", ""])[:4]
        rows.append([name, status, seconds, f"`{command}`" if status != "skipped" else command])
    return rows


def machine_lines(doctor: dict | None, bench: dict | None) -> list[str]:
    model, _ = cpu_model_and_mhz()
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()
    busy = load[2] > cores / 2  # other processes took cores during the check
    lines = [
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- host: {socket.gethostname()}",
        f"- CPU: {model}, {cores} cores visible",
        f"- load average (1, 5, 15 min) at the end: {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}"
        + (
            ": other processes competed for the cores, so times are noisy; read the paired ratios"
            if busy
            else ""
        ),
    ]
    if doctor is None:
        return [*lines, "- doctor did not run: the machine's GPUs are unknown"]
    driver, seen = doctor["driver"], doctor["tensorflow_gpus"]
    nvidia = "; ".join(
        f"{g['name']} (compute capability {g['compute_capability']}, "
        f"{g['memory_total_mb'] or '?'} MiB)"
        for g in driver["gpus"]
    )
    lines.append(
        f"- NVIDIA GPUs: {nvidia}, driver {driver['driver_version'] or '?'}"
        if nvidia
        else "- NVIDIA GPUs: none found (no nvidia-smi listing one, none in /proc/driver/nvidia)"
    )
    tf = doctor["tensorflow"]
    build = (
        f"built with CUDA {tf['cuda_version']}, cuDNN {tf['cudnn_version']}"
        if tf["cuda_build"]
        else "built without CUDA"
    )
    numpy = bench["environment"]["numpy"] if bench else "?"
    lines.append(
        f"- versions: Python {tf['python']}, TensorFlow {tf['version']} ({build}), "
        f"Keras {tf['keras']}, numpy {numpy}"
    )
    if seen:
        names = ", ".join(f"{g['device']} {g['name']}" for g in seen)
        lines.append(f"- TensorFlow sees: {names}; every step ran on gpu:0 (`--device auto`)")
    else:
        lines.append(
            "- **No GPU that TensorFlow can use was found: every step ran on the CPU.**"
            + (" An NVIDIA GPU is present: see doctor's problems." if nvidia else "")
        )
    return lines


def check_section(folder: Path) -> str:
    results = {precision: load(folder, f"check-{precision}") for precision in PRECISIONS}
    variants = next((r["results"] for r in results.values() if r), [])
    rows = []
    for index, variant in enumerate(row["variant"] for row in variants):
        cells = [variant]
        for precision in PRECISIONS:
            document = results[precision]
            if document is None:
                cells.append(f"did not run: {last_log_line(folder, f'check-{precision}')}")
                continue
            row = document["results"][index]
            verdict = "ok" if row["ok"] else "**FAIL**"
            cells.append(f"{row['max_abs_diff']:.1e} (tol {row['tolerance']:.0e}) {verdict}")
        rows.append(cells)
    if not rows:
        return "check did not run: " + last_log_line(folder, "check-float32")
    return markdown_table(("variant", *PRECISIONS), rows)


def training_check_section(folder: Path) -> str:
    """`check --task training`: each variant's worst directional-derivative error against
    central differences of the float64 numpy reference, and its gap to the other variants."""
    document = load(folder, "check-training")
    if document is None:
        return "check --task training did not run: " + last_log_line(folder, "check-training")
    rows = [
        [
            row["variant"],
            f"{row['worst_error']:.1e} (tol {row['tolerance']:.0e}, {row['worst_tensor']})",
            f"{row['max_difference']:.1e} (tol {row['difference_tolerance']:.0e})",
            "ok" if row["ok"] else f"**FAIL** {row['error']}".strip(),
        ]
        for row in document["results"]
    ]
    header = ("variant", "gradient vs numpy", "vs the other variants", "verdict")
    return markdown_table(header, rows)


def _median(row: dict | None) -> str:
    if row is None:
        return "—"
    if row["status"] != "ok":
        return f"failed: {row['error'][:90]}"
    return f"{row['median_s'] * 1e3:.2f}"


def bench_section(folder: Path, batch: int, steps_: int, prefix: str = "bench") -> str:
    """One shape's table: every variant without and with XLA (`prefix` "bench": forward
    passes; "train": training steps, with their phases)."""
    name = f"{prefix}-{batch}x{steps_}"
    plain, xla = load(folder, name), load(folder, f"{name}-xla")
    if plain is None and xla is None:
        return f"did not run: {last_log_line(folder, name)}"
    by_variant = {}
    for document, key in ((plain, "plain"), (xla, "xla")):
        for row in (document or {}).get("results", []):
            by_variant.setdefault(row["variant"], {})[key] = row
    phases = prefix == "train"
    rows = []
    for variant, runs in by_variant.items():
        base, compiled = runs.get("plain"), runs.get("xla")
        both_ok = base and compiled and base["status"] == compiled["status"] == "ok"
        ratio = f"{compiled['median_s'] / base['median_s']:.2f}" if both_ok else "—"
        ok = [run for run in (base, compiled) if run and run["status"] == "ok"]
        cells = [_median(base), _speedup(base), _median(compiled), _speedup(compiled), ratio]
        cells.append(" / ".join(f"{run['first_call_s']:.2f}" for run in ok) or "—")
        cells.append(" / ".join(run["kernel"] if run in ok else "—" for run in (base, compiled)))
        peak = ok[0] if ok else None
        memory = peak and f"{peak['peak_memory_bytes'] / 2**20:.1f} ({peak['peak_memory_kind']})"
        cells.append(memory or "—")
        rows.append([variant, *cells, *([_phases(base)] if phases else [])])
    header = ("variant", "median ms", "vs nested", "+ XLA median ms", "+ XLA vs nested")
    header += ("XLA / no XLA", "first call s (no XLA / XLA)", "LSTM kernel (no XLA / XLA)")
    header += ("peak memory MiB",)
    header += ("phases ms: forward / backward / update (sum / step)",) if phases else ()
    timed = [
        (run["median_s"], f"{variant}{' + XLA' if key == 'xla' else ''}")
        for variant, runs in by_variant.items()
        for key, run in runs.items()
        if run["status"] == "ok"
    ]
    fastest = min(timed) if timed else None
    summary = f"fastest: {fastest[1]}, {fastest[0] * 1e3:.2f} ms" if fastest else "nothing ran"
    device = next(
        (row["device"] for d in (plain, xla) if d for row in d["results"] if row.get("device")), "?"
    )
    return f"device: {device}; {summary}\n\n" + markdown_table(header, rows)


def _speedup(row: dict | None) -> str:
    if row is None or row["status"] != "ok" or row.get("speedup_vs_baseline") is None:
        return "—"
    return f"{row['speedup_vs_baseline']:.2f}x"


def _phases(row: dict | None) -> str:
    if row is None or row["status"] != "ok":
        return "—"
    forward, both, update = (row[f"{name}_median_s"] * 1e3 for name in PHASES)
    ratio = row["phase_sum_s"] / row["median_s"]
    return f"{forward:.3g} / {both - forward:.3g} / {update:.3g} ({ratio:.2f})"


PHASES = ("forward", "forward_backward", "update")


def peer_section(folder: Path, step_rows: list[list[str]]) -> str:
    peer = next((row for row in step_rows if row[0] == "peer"), None)
    if peer is None:
        return "The peer step did not run."
    if peer[1] == "skipped":
        return f"Not run: {peer[3]}."
    text = (folder / "peer.out").read_text() if (folder / "peer.out").exists() else ""
    if peer[1] != "0" or not text.strip():
        return f"Failed (exit {peer[1]}): {last_log_line(folder, 'peer')}"
    return text.strip().split("\n", 1)[1].strip()  # its own "## ..." title line dropped


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seconds", type=int, help="the whole check's duration")
    args = parser.parse_args(argv)
    folder = args.folder
    doctor = load(folder, "doctor")
    step_rows = steps(folder)
    first_bench = next((b for b in (load(folder, f"bench-{x}x{y}") for x, y in SHAPES) if b), None)
    repeats = next(
        (r["repeats"] for r in (first_bench or {}).get("results", []) if r.get("repeats")), "?"
    )
    lines = ["# hierlstm GPU check", "", *machine_lines(doctor, first_bench)]
    if args.seconds is not None:
        lines.append(f"- duration: {args.seconds} s (`benchmarks/model/gpu_check.sh`)")
    lines += ["", "## Steps", "", markdown_table(("step", "exit", "seconds", "command"), step_rows)]
    lines += ["", "## doctor", ""]
    if doctor is None:
        lines.append(f"doctor did not run: {last_log_line(folder, 'doctor')}")
    else:
        lines += ["```text", format_report(doctor), "```"]
    lines += ["", "## Every variant against the numpy reference (batch 4, time 10)", ""]
    lines.append(check_section(folder))
    lines += ["", "## Inference: every variant, without and with XLA", ""]
    lines.append(
        f"{repeats} timed rounds per run after the warm-up, variants interleaved (A B C, A B C, "
        "...). *vs nested* is nested's time over the variant's, paired per round; *XLA / no "
        "XLA* divides the medians of two separate runs, so it is not paired."
    )
    for batch, steps_ in SHAPES:
        lines += ["", f"### batch {batch}, time {steps_}", "", bench_section(folder, batch, steps_)]
    lines += ["", "## Training step: every variant, without and with XLA", ""]
    lines.append(
        "One step: forward (training=True), mean squared error to a fixed target, every "
        "gradient, the SGD update; each phase its own compiled function in the same rounds "
        "(backward = forward+backward minus forward). time_distributed trains at 8x50 only: "
        "its gradient graph unrolls every inner call, over the trace budget beyond 66 steps."
    )
    lines += ["", "### every variant against the numpy reference's gradients", ""]
    lines.append(training_check_section(folder))
    for batch, steps_ in SHAPES:
        table = bench_section(folder, batch, steps_, "train")
        lines += ["", f"### batch {batch}, time {steps_}", "", table]
    lines += ["", "## PyTorch on the same device", "", peer_section(folder, step_rows), ""]
    report = "\n".join(lines)
    (folder / "report.md").write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
