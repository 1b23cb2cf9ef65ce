"""A benchmark's run kept as JSON, RESULTS.md written from the kept runs, and the helpers the
benchmarks share that need no framework (a report is only kept when it holds a markdown table).

`python -m benchmarks NAME [args] --save` writes benchmarks/results/NAME.json: the report, the
command (with the HIERLSTM_* settings it ran under), the commit, the date, the machine, the
versions, the load average before and after, and the exit status. `--save-as LABEL` keeps it as
NAME.LABEL.json instead, beside the newest run: a run kept for comparison with it (the classroom
with runs still in the server's interpreter, say). `python -m benchmarks --results` writes
RESULTS.md from the newest run of each benchmark and its labelled runs, in the registry's order;
git keeps the older ones."""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"
RESULTS_MD = ROOT / "benchmarks" / "RESULTS.md"
HEADER_LINES = ("- date:", "- machine:", "- versions:", "- command:")
PACKAGES = ("tensorflow", "keras", "numpy", "jax", "torch", "streamlit", "playwright")


def cpu_model_and_mhz() -> tuple[str, float]:
    model, mhz = platform.processor() or platform.machine(), 0.0
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("cpu MHz") and not mhz:
                    mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    return model, mhz


def git_commit() -> str:
    """The short commit, and whether the tree has uncommitted changes."""

    def git(*arguments):
        command = ["git", *arguments]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def argument_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """A benchmark's parser: `module` is its `__spec__.name` (so `python -m` names it in the
    usage), its description the first line of its docstring."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=doc.splitlines()[0])


def shapes(text: str) -> list[tuple[int, int]]:
    """(batch, time steps) pairs from "8x50,32x100": an argparse `type=`."""
    return [tuple(int(part) for part in shape.split("x")) for shape in text.split(",")]


def markdown_table(header_row, rows) -> str:
    lines = ["| " + " | ".join(header_row) + " |", "|" + "---|" * len(header_row)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> dict:
    """The CPU, the cores this process may use, the GPUs `nvidia-smi -L` lists, Python and the
    installed versions of the frameworks (without importing them)."""
    gpus = []
    if shutil.which("nvidia-smi"):
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
        gpus = [line.strip() for line in listed.stdout.splitlines() if line.strip()]
    versions = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    cpu, _mhz = cpu_model_and_mhz()
    return {"cpu": cpu, "cores": len(os.sched_getaffinity(0)), "gpus": gpus, "versions": versions}


def command_line() -> str:
    """How this process was started, as `python -m benchmarks.CONCERN.NAME ...` or
    `python -m benchmarks NAME ...`."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    if spec is None:  # not run with -m
        return " ".join([".venv/bin/python", *sys.argv])
    module = spec.name.removesuffix(".__main__")
    return " ".join([".venv/bin/python", "-m", module, *sys.argv[1:]])


def header(title: str, gpus: int | None = None) -> str:
    """A report's header: the date, the machine, the installed versions and the command; `gpus`
    as the framework counts them, else those `nvidia-smi -L` lists (no framework imported)."""
    found = machine()
    gpus = len(found["gpus"]) if gpus is None else gpus
    versions = found["versions"]
    return "\n".join(
        [
            f"## {title}",
            "",
            f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
            f"- machine: {found['cpu']}, {found['cores']} cores visible, "
            f"{'GPUs: ' + str(gpus) if gpus else 'no GPU'}",
            f"- versions: Python {versions['python']}, TensorFlow {versions.get('tensorflow')}, "
            f"Keras {versions.get('keras')}, numpy {versions.get('numpy')}",
            f"- command: `{command_line()}`",
            "",
        ]
    )


def settings_prefix() -> str:
    """The HIERLSTM_* settings of this environment as a command line's prefix ("" if none)."""
    found = sorted(
        f"{key}={value}" for key, value in os.environ.items() if key.startswith("HIERLSTM_")
    )
    return " ".join(found) + " " if found else ""


def run_and_save(name: str, argv: list[str], folder: Path = RESULTS_DIR, label: str = "") -> int:
    """Runs benchmark `name` in its own process, showing its report as it prints, and keeps the
    run in `folder`/NAME.json (NAME.LABEL.json with `label`) only if it printed one, so a failed
    run leaves the last kept one."""
    command = [sys.executable, "-m", "benchmarks", name, *argv]
    started, before = datetime.datetime.now(datetime.UTC), load_average()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        lines.append(line)
    status = process.wait()
    report = "".join(lines).strip()
    if "\n|---" not in report:
        print(f"benchmarks: {name} printed no report; nothing kept", file=sys.stderr)
        return status or 1
    record = {
        "benchmark": name,
        "command": settings_prefix()
        + " ".join([".venv/bin/python", "-m", "benchmarks", name, *argv]),
        "date": started.isoformat(timespec="seconds"),
        "seconds": round((datetime.datetime.now(datetime.UTC) - started).total_seconds()),
        "commit": git_commit(),
        "machine": machine(),
        "load_before": before,
        "load_after": load_average(),
        "status": status,
        "report": report,
        **({"label": label} if label else {}),
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (f"{name}.{label}.json" if label else f"{name}.json")
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return status


def kept_runs(summaries: dict[str, str], folder: Path = RESULTS_DIR) -> list[dict]:
    """The kept runs of the benchmarks `summaries` names ({name: what it answers}, the
    registry's), in its order, each newest run followed by its labelled ones by label (a file of
    no benchmark named there is skipped)."""
    found = {path.stem: path for path in folder.glob("*.json")}
    runs = []
    for name in summaries:
        labelled = sorted(stem for stem in found if stem.startswith(f"{name}."))
        runs += [json.loads(found[stem].read_text()) for stem in [name, *labelled] if stem in found]
    return runs


def results_markdown(runs: list[dict], summaries: dict[str, str]) -> str:
    """RESULTS.md: how to read it, an index, then each run's report under its machine, date,
    commit, command and load (the report's own "## " title line becomes the section's, else the
    benchmark's summary)."""
    lines = [
        "# Benchmark results",
        "",
        "The newest kept run of each benchmark, written by `python -m benchmarks --results` from",
        "benchmarks/results/*.json (`make bench` runs every benchmark this machine can, keeps",
        "each run and writes this file); older runs are in git's history. Read the paired",
        "ratios, not the milliseconds: each benchmark times its candidates in interleaved",
        "rounds and divides within a round, and a shared machine's single times swing.",
        "",
        "| benchmark | what it answers | date (UTC) | machine | commit |",
        "|---|---|---|---|---|",
    ]
    for run in runs:
        where = f"{run['machine']['cpu']}, {run['machine']['cores']} cores"
        lines.append(
            f"| [{_named(run)}](#{_anchor(run)}) | {summaries[run['benchmark']]}"
            f" | {run['date'][:16].replace('T', ' ')} | {where} | {run['commit']} |"
        )
    for run in runs:
        report = run["report"].splitlines()
        title = report[0].removeprefix("## ") if report and report[0].startswith("## ") else ""
        body = report[1:] if title else report
        # what `header` printed above the tables is said once, below
        while body and (not body[0] or body[0].startswith(HEADER_LINES)):
            body = body[1:]
        found = run["machine"]
        versions = ", ".join(f"{name} {version}" for name, version in found["versions"].items())
        lines += [
            "",
            f'<a id="{_anchor(run)}"></a>',
            f"## {_named(run)}: {title or summaries[run['benchmark']]}",
            "",
            f"- run {run['date'][:16].replace('T', ' ')} UTC for {run['seconds']} s on "
            f"{found['cpu']} ({found['cores']} cores; GPUs: {', '.join(found['gpus']) or 'none'})"
            f", commit {run['commit']}, exit status {run['status']}",
            f"- load average (1, 5, 15 min): {run['load_before']} before, "
            f"{run['load_after']} after",
            f"- versions: {versions}",
            f"- command: `{run['command']}`",
            "",
            *(
                [f"![Speed-up over nested per variant and shape]({CHART})", ""]
                if run["benchmark"] == "variants"
                else []
            ),
            *body,
        ]
    return "\n".join(lines) + "\n"


def _named(run: dict) -> str:
    """A kept run's name in RESULTS.md: the benchmark's, and its label if it has one."""
    return f"{run['benchmark']} ({run['label']})" if run.get("label") else run["benchmark"]


def _anchor(run: dict) -> str:
    return f"{run['benchmark']}-{run['label']}" if run.get("label") else run["benchmark"]


def write_results(
    summaries: dict[str, str], folder: Path = RESULTS_DIR, path: Path = RESULTS_MD
) -> Path:
    """RESULTS.md of the benchmarks `summaries` names, and beside it the chart of the kept
    variants run."""
    runs = kept_runs(summaries, folder)
    path.write_text(results_markdown(runs, summaries), encoding="utf-8")
    for run in runs:
        if run["benchmark"] == "variants":
            (path.parent / CHART).write_text(speedup_chart(run), encoding="utf-8")
    return path


README_ROWS = ("nested", "time_distributed", "folded", "vectorized_map", "shared_cell", "fused")
README_ROWS += ("fused + XLA",)
CHART = "results/variants.svg"  # beside RESULTS.md


def _variant_cells(run: dict) -> tuple[list[str], dict]:
    """A kept `variants` run's shapes ("8x50", ...) and its forward pass's cells {(row, shape):
    (median ms, speed-up over nested)} for README_ROWS, read from its markdown report."""
    shapes, cells, forward = [], {}, False
    for line in run["report"].splitlines():
        if line.startswith("### batch "):  # "### batch 8, time 50, forward pass (10 ...)"
            words = line.replace(",", "").split()
            forward = "training" not in line
            shapes += [f"{words[2]}x{words[4]}"] if forward else []
        elif line.startswith("| ") and forward:
            cell = [part.strip() for part in line.strip("| ").split("|")]
            name = cell[0].removesuffix(" (noisy)")
            if name in README_ROWS and cell[1] not in ("failed", "refused"):
                cells[name, shapes[-1]] = (cell[1], cell[3].split()[0])
    return shapes, cells


def headline(run: dict) -> str:
    """The README's table from a kept `variants` run: each variant's median ms and paired
    speed-up over nested at each shape, the fused + XLA row beside them."""
    shapes, cells = _variant_cells(run)
    header = ["variant"] + [f"{shape} {what}" for shape in shapes for what in ("ms", "x nested")]
    rows = [
        [name, *(part for shape in shapes for part in cells.get((name, shape), ("-", "-")))]
        for name in README_ROWS
    ]
    return markdown_table(header, rows)


def speedup_chart(run: dict) -> str:
    """An SVG of the kept `variants` run: per variant, a bar per shape, its height the paired
    speed-up over nested (a dashed line at 1), each bar labelled with its value."""
    shapes, cells = _variant_cells(run)
    colours = ("#4c78a8", "#f58518", "#54a24b", "#b279a2")
    top = max([float(cell[1]) for cell in cells.values()] + [1.0]) * 1.1
    width, height, left, base, bar = 760, 330, 40, 260, 22
    group = (width - left) / len(README_ROWS)
    y = lambda value: base - value / top * (base - 30)  # noqa: E731
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<text x="{left}" y="16" font-size="13">Speed-up over nested (median of paired '
        f"rounds), {run['machine']['cpu']}, {run['date'][:10]}, commit {run['commit']}</text>",
        f'<line x1="{left}" x2="{width}" y1="{y(1):.1f}" y2="{y(1):.1f}" stroke="#888" '
        'stroke-dasharray="4 3"/>',
        f'<line x1="{left}" x2="{width}" y1="{base}" y2="{base}" stroke="#444"/>',
    ]
    for row, name in enumerate(README_ROWS):
        x0 = left + row * group + (group - bar * len(shapes)) / 2
        for column, shape in enumerate(shapes):
            if (name, shape) not in cells:
                continue
            value, x = float(cells[name, shape][1]), x0 + column * bar
            parts += [
                f'<rect x="{x:.1f}" y="{y(value):.1f}" width="{bar - 2}" '
                f'height="{base - y(value):.1f}" fill="{colours[column % len(colours)]}"/>',
                f'<text x="{x + bar / 2 - 1:.1f}" y="{y(value) - 3:.1f}" '
                f'text-anchor="middle" font-size="9">{value:g}</text>',
            ]
        parts.append(
            f'<text x="{left + (row + 0.5) * group:.1f}" y="{base + 16}" '
            f'text-anchor="middle">{name}</text>'
        )
    for column, shape in enumerate(shapes):
        x = left + column * 160
        parts += [
            f'<rect x="{x}" y="{height - 22}" width="12" height="12" '
            f'fill="{colours[column % len(colours)]}"/>',
            f'<text x="{x + 16}" y="{height - 12}">batch x time {shape}</text>',
        ]
    return "\n".join([*parts, "</svg>"]) + "\n"
